use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use super::{Invalid, hook_verdict, schema_check};
use crate::call::{Call, Coerced, Executed, Validated};
use crate::future::{inner_accessors, ready_call, take_inner};
use crate::outcome::{Content, Outcome};

/// Checks the coerced arguments against the schema and the tool. It
/// decides in `call()` when the tool's `validate` settles without awaiting,
/// so it is ready when its inner service is; otherwise its future awaits
/// the tool's check, then calls the inner service it was readied with.
#[derive(Clone, Debug)]
pub struct Validate<S> {
    inner: S,
}

inner_accessors!(Validate);

impl<S> Validate<S> {
    /// Validates the arguments of calls to `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S> Service<Call<Coerced>> for Validate<S>
where
    S: Service<Call<Validated>, Response = Call<Executed>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Coerced>) -> Self::Future {
        if let Err(invalid) = schema_check(&call.state.tool, &call.state.args) {
            return ResponseFuture::ended(refuse(call, invalid));
        }
        let shape = &call.state.tool.hooks().validate;
        let settled = if shape.may_settle() {
            let hook = call.state.tool.tool().validate(&call.state.args, &call.cx);
            shape.settle_now(hook)
        } else {
            None
        };
        if let Some(answer) = settled {
            return match hook_verdict(answer) {
                Err(invalid) => ResponseFuture::ended(refuse(call, invalid)),
                Ok(()) => ResponseFuture::inner(self.inner.call(validated(call))),
            };
        }
        let inner = take_inner(&mut self.inner);
        ResponseFuture::awaiting(async move {
            let hook = call.state.tool.tool().validate(&call.state.args, &call.cx);
            call.state.tool.hooks().validate.learn(&hook);
            match hook_verdict(hook.await) {
                Err(invalid) => refuse(call, invalid),
                Ok(()) => ready_call(inner, validated(call)).await,
            }
        })
    }
}

/// The call ended here: `invalid`'s message and code.
fn refuse(call: Call<Coerced>, Invalid { message, code }: Invalid) -> Call<Executed> {
    let (call, Coerced { coercions, .. }) = call.split();
    call.finish(
        Outcome::Failed,
        vec![Content::text(message)],
        code,
        coercions,
    )
}

/// The call, validated.
fn validated(call: Call<Coerced>) -> Call<Validated> {
    let (call, state) = call.split();
    let Coerced {
        tool,
        args,
        coercions,
    } = state;
    call.advance(Validated {
        tool,
        args,
        coercions,
    })
}
