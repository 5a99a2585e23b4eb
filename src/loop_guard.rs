//! The repeated-call loop guard: a model that makes the same call with the
//! same result again and again, or goes round a short cycle of calls whose
//! results do not change, is told so, and then the repeat is not run.
//!
//! The breaker counts failures; this counts sameness, of successful calls
//! too. A call's identity is its tool and its arguments after coercion
//! (object keys in sorted order); its result's identity is the outcome and
//! the content the model reads. The guard keeps the last `window` calls of
//! the session, across turns:
//!
//! - when the last `repeats` calls are one call with one result, that
//!   result gets the sentence [`repeat_note`]; the next identical call is
//!   answered without running, with [`repeat_refusal`] (outcome `denied`,
//!   which the breaker does not count);
//! - when the last `repeats` × P calls (P from 2 to 4) go round the same P
//!   calls with the same results, the last one's result gets
//!   [`cycle_note`], and the next call that would go round again is
//!   answered with [`cycle_refusal`].
//!
//! A call with other arguments, or a result that changed (a job's output
//! that grew, a file that was edited meanwhile), is not a repeat: polling
//! that sees progress is never stopped.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use agentcore_stages::{Call, Content, Executed, Gated, Outcome};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower::{Layer, Service};

/// The guard's settings (`[loop_guard]` in a policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoopGuardConfig {
    /// Identical calls with identical results before the note (the next
    /// one is not run); 0 turns the guard off. Default 3.
    pub repeats: u32,
    /// How many of the last calls are remembered. Default 20.
    pub window: usize,
    /// Whether the guard works in bypass mode too (default true: only a
    /// policy that says `in_bypass = false` turns it off there).
    pub in_bypass: bool,
}

impl Default for LoopGuardConfig {
    fn default() -> Self {
        Self {
            repeats: 3,
            window: 20,
            in_bypass: true,
        }
    }
}

/// The sentence added to the Nth identical result.
pub fn repeat_note(tool: &str, n: usize) -> String {
    format!(
        "(This is the {} identical `{tool}` call in a row with the same result: calling it again will not change it, and the next identical call will not be run. Try something different.)",
        ordinal(n)
    )
}

/// The answer to an identical call after the note.
pub fn repeat_refusal(tool: &str, n: usize) -> String {
    format!(
        "Not run: the last {n} `{tool}` calls had these same arguments and gave the same result, so this one would too. Change the arguments or try something different."
    )
}

/// The sentence added when calls go round a cycle.
pub fn cycle_note(tools: &[String], rounds: usize) -> String {
    format!(
        "(The last {} calls went round the same {} calls ({}) {rounds} times with the same results: going round again will not change them, and the next call that does will not be run.)",
        tools.len() * rounds,
        tools.len(),
        tools.join(", ")
    )
}

/// The answer to a call that would go round the cycle again.
pub fn cycle_refusal(tools: &[String], rounds: usize) -> String {
    format!(
        "Not run: the last {} calls went round the same {} calls ({}) {rounds} times with the same results, and this call would start another round. Try something different.",
        tools.len() * rounds,
        tools.len(),
        tools.join(", ")
    )
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// One remembered call.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    call: u64,
    result: u64,
    tool: String,
}

/// The guard's memory, shared by the clones of one layer.
#[derive(Debug, Default)]
struct History {
    seen: VecDeque<Seen>,
}

impl History {
    /// Length of the run of identical entries at the end.
    fn trailing_run(&self) -> usize {
        let Some(last) = self.seen.back() else {
            return 0;
        };
        self.seen.iter().rev().take_while(|s| *s == last).count()
    }

    /// The period P (2..=4) of a cycle repeated `rounds` times at the end,
    /// when the cycle is not one call repeated.
    fn trailing_cycle(&self, rounds: usize) -> Option<usize> {
        let n = self.seen.len();
        (2..=4).find(|&p| {
            if n < p * rounds {
                return false;
            }
            let tail: Vec<&Seen> = self.seen.iter().skip(n - p * rounds).collect();
            let first = &tail[..p];
            first.iter().any(|s| s.call != first[0].call)
                && tail.chunks(p).all(|chunk| chunk == first)
        })
    }
}

/// The guard as a tower layer on `Call<Gated>`, around execution.
#[derive(Clone, Debug)]
pub struct LoopGuardLayer {
    config: LoopGuardConfig,
    history: Arc<Mutex<History>>,
}

impl LoopGuardLayer {
    /// A guard with `config` and an empty memory.
    pub fn new(config: LoopGuardConfig) -> Self {
        Self {
            config,
            history: Arc::default(),
        }
    }
}

impl<S> Layer<S> for LoopGuardLayer {
    type Service = LoopGuard<S>;

    fn layer(&self, inner: S) -> Self::Service {
        LoopGuard {
            inner,
            config: self.config,
            history: self.history.clone(),
        }
    }
}

/// The service of [`LoopGuardLayer`].
#[derive(Clone, Debug)]
pub struct LoopGuard<S> {
    inner: S,
    config: LoopGuardConfig,
    history: Arc<Mutex<History>>,
}

/// A stable hash of a value, object keys in sorted order.
fn hash_value(value: &Value, h: &mut impl Hasher) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            b'{'.hash(h);
            for k in keys {
                k.hash(h);
                hash_value(&map[k], h);
            }
        }
        Value::Array(items) => {
            b'['.hash(h);
            items.len().hash(h);
            for item in items {
                hash_value(item, h);
            }
        }
        other => other.to_string().hash(h),
    }
}

fn call_key(tool: &str, args: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tool.hash(&mut h);
    hash_value(args, &mut h);
    h.finish()
}

fn result_key(outcome: Outcome, content: &[Content]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{outcome:?}").hash(&mut h);
    serde_json::to_string(content)
        .unwrap_or_default()
        .hash(&mut h);
    h.finish()
}

impl<S> Service<Call<Gated>> for LoopGuard<S>
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
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let repeats = self.config.repeats as usize;
        if repeats == 0 {
            return Box::pin(inner.call(call));
        }
        let tool = call.tool_name().to_owned();
        let key = call_key(&tool, call.state().args().value());
        // Decided before running: a repeat past the note is not run.
        {
            let history = self.history.lock().unwrap_or_else(|e| e.into_inner());
            let run = history.trailing_run();
            if run >= repeats && history.seen.back().is_some_and(|s| s.call == key) {
                let text = repeat_refusal(&tool, run);
                return Box::pin(
                    async move { Ok(call.answer_without_running(Outcome::Denied, text)) },
                );
            }
            if let Some(p) = history.trailing_cycle(repeats) {
                let n = history.seen.len();
                if history.seen[n - p].call == key {
                    let tools: Vec<String> = history
                        .seen
                        .iter()
                        .skip(n - p)
                        .map(|s| s.tool.clone())
                        .collect();
                    let text = cycle_refusal(&tools, repeats);
                    return Box::pin(async move {
                        Ok(call.answer_without_running(Outcome::Denied, text))
                    });
                }
            }
        }
        let history = self.history.clone();
        let window = self.config.window.max(repeats * 4);
        Box::pin(async move {
            let mut executed = inner.call(call).await?;
            let state = executed.state();
            let seen = Seen {
                call: key,
                result: result_key(state.outcome(), state.content()),
                tool: tool.clone(),
            };
            let note = {
                let mut history = history.lock().unwrap_or_else(|e| e.into_inner());
                history.seen.push_back(seen);
                while history.seen.len() > window {
                    history.seen.pop_front();
                }
                let run = history.trailing_run();
                if run == repeats {
                    Some(repeat_note(&tool, run))
                } else if let Some(p) = history.trailing_cycle(repeats) {
                    let n = history.seen.len();
                    let tools: Vec<String> = history
                        .seen
                        .iter()
                        .skip(n - p)
                        .map(|s| s.tool.clone())
                        .collect();
                    Some(cycle_note(&tools, repeats))
                } else {
                    None
                }
            };
            if let Some(note) = note {
                executed.content_mut().push(Content::text(note));
            }
            Ok(executed)
        })
    }
}
