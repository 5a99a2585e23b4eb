//! The pipeline's checkpoint stage: around the execution of every call
//! that can write, a look before and a checkpoint after.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::{Context, Poll};

use agentcore_stages::{Call, Content, Executed, Gated};
use futures::future::BoxFuture;
use tower::{Layer, Service};

use super::Checkpoints;
use crate::fs::judged::JudgedPaths;

/// Records a checkpoint of every call that can write
/// ([`agentcore_stages::Tool::read_only`] false, and not a command that
/// runs beside others because it only reads), except the calls of a tool
/// that carries [`RecordsItself`].
#[derive(Clone, Debug)]
pub struct CheckpointLayer {
    checkpoints: Checkpoints,
    file_tools: Arc<HashSet<String>>,
}

/// A tool extension: the checkpoint stage leaves this tool's calls alone,
/// because what they change is recorded by [`Checkpoints`] itself (the
/// `rewind` tool: a rewind is its own checkpoint; wrapped in another
/// recording it would be looked at twice).
///
/// ```
/// use agentcore::checkpoint::RecordsItself;
///
/// let mut extensions = agentcore::Extensions::new();
/// extensions.insert(RecordsItself);
/// assert!(extensions.get::<RecordsItself>().is_some());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordsItself;

impl CheckpointLayer {
    /// A layer recording into `checkpoints`; `file_tools` are the tools
    /// whose writes are exactly the paths the gate judged (the built-in
    /// `edit`, `multi_edit`, `edit_lines`, `write`, `apply_patch`): for them only those
    /// paths are looked at, for every other tool the whole roots.
    pub fn new(checkpoints: Checkpoints, file_tools: impl IntoIterator<Item = String>) -> Self {
        Self {
            checkpoints,
            file_tools: Arc::new(file_tools.into_iter().collect()),
        }
    }
}

impl<S> Layer<S> for CheckpointLayer {
    type Service = CheckpointService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CheckpointService {
            inner,
            checkpoints: self.checkpoints.clone(),
            file_tools: self.file_tools.clone(),
        }
    }
}

/// The service of [`CheckpointLayer`].
#[derive(Clone, Debug)]
pub struct CheckpointService<S> {
    inner: S,
    checkpoints: Checkpoints,
    file_tools: Arc<HashSet<String>>,
}

impl<S> Service<Call<Gated>> for CheckpointService<S>
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
        let tool = call.state().tool().tool().clone();
        let args = call.state().args().value();
        let writes = !tool.read_only(args)
            && tool.concurrency_safe(args) != Some(true)
            && tool.extensions().get::<RecordsItself>().is_none();
        if !writes {
            return Box::pin(inner.call(call));
        }
        let name = tool.name().to_owned();
        let label = tool.activity(args).unwrap_or_else(|| name.clone());
        let paths: Option<Vec<PathBuf>> = if self.file_tools.contains(&name) {
            call.state()
                .args()
                .extensions()
                .get::<JudgedPaths>()
                .and_then(|judged| judged.iter().map(|j| j.target.clone()).collect())
        } else {
            None
        };
        let call_id = call.call_id().to_owned();
        let checkpoints = self.checkpoints.clone();
        Box::pin(async move {
            let recorder = checkpoints.clone();
            let begun =
                tokio::task::spawn_blocking(move || recorder.begin(&call_id, &name, &label, paths))
                    .await;
            let mut executed = inner.call(call).await?;
            let problem = match begun {
                Ok(Ok(recording)) => {
                    match tokio::task::spawn_blocking(move || checkpoints.end(recording)).await {
                        Ok(Ok(_)) => None,
                        Ok(Err(e)) => Some(e.to_string()),
                        Err(e) => Some(e.to_string()),
                    }
                }
                Ok(Err(e)) => Some(e.to_string()),
                Err(e) => Some(e.to_string()),
            };
            if let Some(problem) = problem {
                executed.content_mut().push(Content::text(format!(
                    "(checkpoint: what this call changed could not be recorded, so a rewind cannot undo it: {problem})"
                )));
            }
            Ok(executed)
        })
    }
}
