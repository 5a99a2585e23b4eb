use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use futures::FutureExt;
use tower::Service;

use super::ResponseFuture;
use crate::call::{Call, Executed, Gated};
use crate::outcome::{Content, Outcome};
use crate::panic;
use crate::texts;

/// Runs the tool: the innermost service of every pipeline. Always ready.
#[derive(Clone, Copy, Debug, Default)]
pub struct Execute {
    _priv: (),
}

impl Execute {
    /// The service.
    pub const fn new() -> Self {
        Self { _priv: () }
    }
}

impl Service<Call<Gated>> for Execute {
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Gated>) -> Self::Future {
        ResponseFuture::new(async move {
            let (mut call, state) = call.split();
            let Gated {
                tool,
                args,
                coercions,
                ..
            } = state;
            // What the gate established reaches typed tools too, through
            // the context they are given.
            if !args.extensions().is_empty() {
                call.cx.extensions_mut().extend(args.extensions().clone());
            }
            let cancelled = |call: Call<()>, coercions| {
                call.finish(
                    Outcome::Cancelled,
                    vec![Content::text(texts::CANCELLED)],
                    None,
                    coercions,
                )
            };
            if call.cx.cancellation.is_cancelled() {
                return cancelled(call, coercions);
            }
            let name = call.tool.clone();
            let run = AssertUnwindSafe(tool.tool().execute(args, &call.cx)).catch_unwind();
            let ran = if tool.tool().observes_cancellation() {
                run.await
            } else {
                tokio::select! {
                    biased;
                    ran = run => ran,
                    _ = call.cx.cancellation.cancelled() => {
                        return cancelled(call, coercions);
                    }
                }
            };
            let (outcome, content) = match ran {
                Ok(Ok(output)) => (Outcome::Success, output.content),
                Ok(Err(err)) if err.cancelled => (Outcome::Cancelled, err.content),
                Ok(Err(err)) => (Outcome::Failed, err.content),
                Err(payload) => (
                    Outcome::Failed,
                    vec![Content::text(panic::failure_text(&name, &*payload))],
                ),
            };
            call.finish(outcome, content, None, coercions)
        })
    }
}
