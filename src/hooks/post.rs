//! PostToolUse and PostToolUseFailure: a tower layer at the insertion
//! point after Execute (on `Call<Gated>`, around the tool's run).

use std::task::{Context, Poll};

use agentcore_stages::{Call, CallContext, Content, Executed, Gated, Outcome};
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tower::{Layer, Service};

use super::config::HookEvent;
use super::input::tool_input;
use super::reply::{self, Reply};
use super::{HookRunner, report};

/// Runs the PostToolUse hooks after a call that succeeded and the
/// PostToolUseFailure hooks after one whose tool failed (other endings,
/// such as a cancellation, run none).
///
/// - exit 2, `"decision": "block"`, `"continue": false` or a failure that
///   blocks: the result becomes an error the model reads, which says the
///   tool already ran and is followed by the tool's output. A blocked
///   success ends [`Outcome::Denied`], which the breaker does not count;
///   a blocked failure stays [`Outcome::Failed`] (the tool's own failure).
/// - `additionalContext`: appended to the result as a text block.
///
/// Place it at the insertion point, innermost of your layers or alone:
/// `pipeline.service_with(ServiceBuilder::new().layer(PostToolUseLayer::new(runner)))`.
#[derive(Clone, Debug)]
pub struct PostToolUseLayer {
    runner: HookRunner,
}

impl PostToolUseLayer {
    /// The hooks of `runner`.
    pub fn new(runner: HookRunner) -> Self {
        Self { runner }
    }
}

impl<S> Layer<S> for PostToolUseLayer {
    type Service = PostToolUse<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PostToolUse {
            inner,
            runner: self.runner.clone(),
        }
    }
}

/// See [`PostToolUseLayer`].
#[derive(Clone, Debug)]
pub struct PostToolUse<S> {
    inner: S,
    runner: HookRunner,
}

impl<S> PostToolUse<S> {
    /// The wrapped service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The wrapped service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The wrapped service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<Call<Gated>> for PostToolUse<S>
where
    S: Service<Call<Gated>, Response = Call<Executed>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send + 'static,
{
    type Response = Call<Executed>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Call<Executed>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Gated>) -> Self::Future {
        // The ready service goes with this call; a clone stays.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let runner = self.runner.clone();
        let tool = call.state().tool().name().to_owned();
        let args = call.state().args().value().clone();
        let call_id = call.call_id().to_owned();
        let cx = call.context().clone();
        Box::pin(async move {
            let mut executed = inner.call(call).await?;
            after(&runner, &mut executed, &tool, &args, &call_id, &cx).await;
            Ok(executed)
        })
    }
}

/// Runs the hooks of the call's ending and applies what they said.
async fn after(
    runner: &HookRunner,
    executed: &mut Call<Executed>,
    tool: &str,
    args: &Value,
    call_id: &str,
    cx: &CallContext,
) {
    let outcome = executed.state().outcome();
    let event = match outcome {
        Outcome::Success => HookEvent::PostToolUse,
        Outcome::Failed => HookEvent::PostToolUseFailure,
        _ => return,
    };
    let input = tool_input(tool, args, runner.root());
    let text = text_of(executed.state().content());
    let mut extra = Map::new();
    if event == HookEvent::PostToolUse {
        let mut response = json!({
            "output": text,
            "content": executed.state().content(),
        });
        if let Some(path) = input.get("file_path") {
            response["filePath"] = path.clone();
        }
        extra.insert("tool_response".into(), response);
    } else {
        extra.insert("error".into(), Value::String(text));
        extra.insert("is_interrupt".into(), Value::Bool(false));
    }
    let runs = runner.run(event, call_id, tool, &input, extra, cx).await;
    let fail_closed = runner.config().fail_closed;
    let mut blocks = Vec::new();
    let mut context = Vec::new();
    for (run, reply) in &runs {
        let command = &run.hook.command;
        let blocked = |why: &str| format!("{event} hook {command:?} blocked this result: {why}");
        let effect = match reply {
            Reply::Quiet => "none",
            Reply::Cancelled => "cancelled",
            Reply::Block(stderr) => {
                blocks.push(blocked(if stderr.is_empty() {
                    "it exited with code 2 and gave no reason"
                } else {
                    stderr
                }));
                "block"
            }
            Reply::Failed(how) => match reply.blocking_failure(run, fail_closed) {
                Some(_) => {
                    blocks.push(reply::failure_text(event, command, how));
                    "block"
                }
                None => "failed",
            },
            Reply::Json(output) => {
                let mut effect = "none";
                if let Some(extra) = output
                    .hook_specific_output
                    .as_ref()
                    .and_then(|s| s.additional_context.as_deref())
                    .filter(|c| !c.trim().is_empty())
                {
                    context.push(extra.to_owned());
                    effect = "context";
                }
                let reason = output.reason.as_deref().filter(|r| !r.trim().is_empty());
                if output.proceed == Some(false) {
                    let why = output
                        .stop_reason
                        .as_deref()
                        .or(reason)
                        .unwrap_or("no reason given");
                    blocks.push(format!("{event} hook {command:?} stopped here: {why}"));
                    effect = "block";
                } else if output.decision.as_deref() == Some("block") {
                    blocks.push(blocked(reason.unwrap_or("no reason given")));
                    effect = "block";
                }
                effect
            }
        };
        report(cx, event, run, reply, effect);
    }
    if !blocks.is_empty() {
        let ran = match event {
            HookEvent::PostToolUseFailure => "The tool already ran and failed; its error follows.",
            _ => {
                "The tool already ran: what it did stays done (check it before you go on); its output follows."
            }
        };
        let text = format!("{}\n{ran}", blocks.join("\n"));
        executed.content_mut().insert(0, Content::text(text));
        if outcome == Outcome::Success {
            executed.mark_denied();
        }
    }
    for extra in context {
        executed.content_mut().push(Content::text(extra));
    }
}

/// The text blocks of a result, joined.
fn text_of(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(Content::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}
