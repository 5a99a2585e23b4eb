use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Extensions;
use serde_json::Value;
use tower::Service;

use super::ResponseFuture;
use super::{Gate, GateDecision, GateRequest};
use crate::call::{Call, CallContext, Executed, GateVerdict, Gated, GatedArgs, Previewed, RawArgs};
use crate::coerce::{Coercion, parse_and_coerce};
use crate::future::{inner_accessors, ready_call, take_inner};
use crate::outcome::{Content, Outcome};
use crate::registry::RegisteredTool;
use crate::texts;
use crate::{preview, validate};

/// Asks the gate; the only maker of `Call<Gated>`. Without a gate it
/// decides in `call()`, so it is ready when its inner service is; with one,
/// its future awaits the gate, then calls the inner service it was readied
/// with.
#[derive(Clone)]
pub struct GateService<S> {
    inner: S,
    gate: Option<Arc<dyn Gate>>,
}

inner_accessors!(GateService);

impl<S> GateService<S> {
    /// Asks `gate` about every call to `inner`; `None` allows every call.
    pub fn new(inner: S, gate: Option<Arc<dyn Gate>>) -> Self {
        Self { inner, gate }
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for GateService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateService")
            .field("inner", &self.inner)
            .field("gate", &self.gate.is_some())
            .finish()
    }
}

impl<S> Service<Call<Previewed>> for GateService<S>
where
    S: Service<Call<Gated>, Response = Call<Executed>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Previewed>) -> Self::Future {
        let (call, state) = call.split();
        let Some(gate) = self.gate.clone() else {
            // No gate allows every call, as it is.
            let Previewed {
                tool,
                args,
                coercions,
                preview,
            } = state;
            let gated = Gated {
                tool,
                args: GatedArgs::new(args, Extensions::new()),
                coercions,
                preview,
                verdict: GateVerdict::Allowed,
            };
            return ResponseFuture::inner(self.inner.call(call.advance(gated)));
        };
        let inner = take_inner(&mut self.inner);
        ResponseFuture::awaiting(async move {
            match verdict(Some(&*gate), &call, state).await {
                Ok(gated) => ready_call(inner, call.advance(gated)).await,
                Err(Refusal {
                    outcome,
                    text,
                    coercions,
                }) => call.finish(outcome, vec![Content::text(text)], None, coercions),
            }
        })
    }
}

/// How a call ends at the gate: the one shape of its four endings.
struct Refusal {
    outcome: Outcome,
    text: String,
    coercions: Vec<Coercion>,
}

impl Refusal {
    /// A denial with `reason`, or the default text when it is empty.
    fn denied(reason: String, coercions: Vec<Coercion>) -> Self {
        let text = if reason.is_empty() {
            texts::DENIED.to_owned()
        } else {
            reason
        };
        Self {
            outcome: Outcome::Denied,
            text,
            coercions,
        }
    }
}

/// Asks the gate about the call (none allows it): the gated state, or how
/// the call ends here.
async fn verdict(
    gate: Option<&dyn Gate>,
    call: &Call<()>,
    state: Previewed,
) -> Result<Gated, Refusal> {
    let Previewed {
        tool,
        args,
        coercions,
        preview,
    } = state;
    let decision = match gate {
        None => Ok(GateDecision::Allow),
        Some(gate) => {
            let request = GateRequest {
                tool: tool.clone(),
                call_id: String::from(&*call.cx.call_id),
                label: tool.tool().label().map(str::to_owned),
                args: args.clone(),
                preview: preview.clone(),
                context: call.cx.clone(),
            };
            // A person may take minutes; an abort must not wait for them.
            tokio::select! {
                biased;
                _ = call.cx.cancellation.cancelled() => {
                    return Err(Refusal {
                        outcome: Outcome::Cancelled,
                        text: texts::CANCELLED.to_owned(),
                        coercions,
                    });
                }
                decision = gate.decide(request) => decision,
            }
        }
    };
    let (decision, extensions) = match decision {
        Ok(GateDecision::AllowWith(extensions)) => (Ok(GateDecision::Allow), extensions),
        Ok(GateDecision::RewriteWith(args, extensions)) => {
            (Ok(GateDecision::Rewrite(args)), extensions)
        }
        other => (other, Extensions::new()),
    };
    match decision {
        Ok(GateDecision::Allow) => Ok(Gated {
            tool,
            args: GatedArgs::new(args, extensions),
            coercions,
            preview,
            verdict: GateVerdict::Allowed,
        }),
        Ok(GateDecision::Rewrite(new_args)) => match recheck(&tool, new_args, &call.cx).await {
            Ok((args, coercions, preview)) => Ok(Gated {
                tool,
                args: GatedArgs::new(args, extensions),
                coercions,
                preview,
                verdict: GateVerdict::Rewritten,
            }),
            Err(err) => Err(Refusal {
                outcome: Outcome::Denied,
                text: format!("the gate rewrote the arguments into an invalid call: {err}"),
                coercions,
            }),
        },
        Ok(GateDecision::Deny(reason)) => {
            Err(Refusal::denied(reason.unwrap_or_default(), coercions))
        }
        // Taken apart above.
        Ok(GateDecision::AllowWith(_) | GateDecision::RewriteWith(..)) => {
            Err(Refusal::denied(String::new(), coercions))
        }
        Err(err) => Err(Refusal::denied(err.to_string(), coercions)),
    }
}

/// Coerce, validate and preview again, for rewritten arguments.
async fn recheck(
    tool: &RegisteredTool,
    args: Value,
    cx: &CallContext,
) -> Result<(Value, Vec<Coercion>, Option<String>), String> {
    let (args, coercions) = parse_and_coerce(tool, &RawArgs::Value(args))?;
    validate::check(tool, &args, cx)
        .await
        .map_err(|invalid| invalid.message)?;
    let preview = preview::compute(tool, &args, cx).await?;
    Ok((args, coercions, preview))
}
