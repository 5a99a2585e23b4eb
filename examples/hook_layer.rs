//! Claude Code hooks reused as they are, and the same formatter written as
//! a tower layer.
//!
//! 1. A project keeps a guard and a formatter as Claude Code hooks: in
//!    `.claude/settings.json`, a PreToolUse hook (bash) that blocks
//!    `rm -rf`, and a PostToolUse hook (python3) that strips trailing
//!    spaces from the file just written. agentcore runs the scripts
//!    unchanged: the PreToolUse hooks in the gate, before the approval
//!    engine ([`PreToolUseGate`]); the PostToolUse hooks as a tower layer
//!    at the insertion point after Execute ([`PostToolUseLayer`]).
//! 2. The same formatter as a tower layer in Rust at the same insertion
//!    point: no process, the result extended with a note for the model.
//!
//! Run: `cargo run --example hook_layer` (needs bash and python3).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use agentcore::approval::{ApprovalEngine, Mode};
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::hooks::{HookConfig, HookRunner, PostToolUseLayer, PreToolUseGate};
use agentcore::process::OutputDir;
use agentcore::session::builtin_registry;
use agentcore::{BoxFuture, Call, Content, Outcome, Pipeline, ToolResult};
use agentcore::{Executed, Gated};
use serde_json::{Value, json};
use tower::{Layer, Service, ServiceBuilder, ServiceExt};

/// The project's `.claude/settings.json`, as a team keeps it for Claude Code.
const SETTINGS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash",
       "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/no-rm-rf.sh", "timeout": 10}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit|MultiEdit|Write",
       "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/strip-trailing-spaces.py"}]}
    ]
  }
}"#;

/// `.claude/hooks/no-rm-rf.sh`: exit 2 blocks; stderr is what the model reads.
const GUARD: &str = r#"#!/usr/bin/env bash
if grep -Eq '"command": *"[^"]*rm +-[a-z]*(rf|fr)'; then
  echo "Blocked: rm -rf is not allowed here; delete the files you mean by name." >&2
  exit 2
fi
"#;

/// `.claude/hooks/strip-trailing-spaces.py`: formats the written file.
const FORMATTER: &str = r#"#!/usr/bin/env python3
import json, re, sys
path = json.load(sys.stdin)["tool_input"].get("file_path")
if path:
    text = open(path).read()
    open(path, "w").write(re.sub(r"[ \t]+$", "", text, flags=re.M))
"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::tempdir()?;
    let root = project.path().canonicalize()?;
    write_project(&root)?;

    // The built-in tools over the project.
    let workspace = Workspace::new(&root)?;
    let output_dir = Arc::new(OutputDir::new()?);
    let registry = Arc::new(builtin_registry(
        &workspace,
        &FileReadState::new(),
        &output_dir,
    ));
    let engine = ApprovalEngine::new(&root).with_mode(Mode::Bypass);

    // 1. The Claude Code hooks, unchanged.
    let hooks = HookConfig::load_settings(root.join(".claude/settings.json"))?;
    let runner = HookRunner::new(hooks, &root).with_approval(&engine);
    let pipeline = Pipeline::builder()
        .registry(registry.clone())
        .gate(Arc::new(PreToolUseGate::new(
            runner.clone(),
            engine.clone(),
        )))
        .build();
    let with_hooks = pipeline.service_with(
        ServiceBuilder::new()
            .timeout(Duration::from_secs(120))
            .layer(PostToolUseLayer::new(runner)),
    );

    println!("— Claude Code hooks, run as they are —");
    let denied = run(&with_hooks, "bash", json!({"command": "rm -rf src"})).await;
    show(&denied);
    assert_eq!(denied.outcome, Outcome::Denied);
    let written = run(
        &with_hooks,
        "write",
        json!({"file_path": "notes.md", "content": "# Notes   \nfirst line  \n"}),
    )
    .await;
    show(&written);
    println!(
        "notes.md is now {:?}",
        std::fs::read_to_string(root.join("notes.md"))?
    );

    // 2. The same formatter as a tower layer, at the same insertion point.
    println!("\n— the formatter as a tower layer —");
    let pipeline = Pipeline::builder()
        .registry(registry)
        .gate(Arc::new(engine))
        .build();
    let native = pipeline
        .service_with(ServiceBuilder::new().layer(StripTrailingSpacesLayer { root: root.clone() }));
    let written = run(
        &native,
        "write",
        json!({"file_path": "todo.md", "content": "- ship it   \n"}),
    )
    .await;
    show(&written);
    println!(
        "todo.md is now {:?}",
        std::fs::read_to_string(root.join("todo.md"))?
    );
    Ok(())
}

/// Writes the settings file and the two scripts, as the project keeps them.
fn write_project(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let hooks = root.join(".claude/hooks");
    std::fs::create_dir_all(&hooks)?;
    std::fs::write(root.join(".claude/settings.json"), SETTINGS)?;
    for (name, text) in [
        ("no-rm-rf.sh", GUARD),
        ("strip-trailing-spaces.py", FORMATTER),
    ] {
        let path = hooks.join(name);
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    std::fs::create_dir_all(root.join("src"))
}

async fn run(service: &agentcore::stages::PipelineService, tool: &str, args: Value) -> ToolResult {
    let result = service.clone().oneshot(Call::new("c1", tool, args)).await;
    match result {
        Ok(result) => result,
        Err(never) => match never {},
    }
}

fn show(result: &ToolResult) {
    println!("{} {}: {}", result.tool, result.outcome, result.text());
}

/// Strips trailing spaces from the file a successful `write` or `edit`
/// wrote, and tells the model so: what the PostToolUse script does, as a
/// tower layer on `Call<Gated>`.
#[derive(Clone, Debug)]
struct StripTrailingSpacesLayer {
    root: PathBuf,
}

impl<S> Layer<S> for StripTrailingSpacesLayer {
    type Service = StripTrailingSpaces<S>;

    fn layer(&self, inner: S) -> Self::Service {
        StripTrailingSpaces {
            inner,
            root: self.root.clone(),
        }
    }
}

/// The service made by [`StripTrailingSpacesLayer`].
#[derive(Clone, Debug)]
struct StripTrailingSpaces<S> {
    inner: S,
    root: PathBuf,
}

impl<S> Service<Call<Gated>> for StripTrailingSpaces<S>
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
        let file = matches!(call.tool_name(), "write" | "edit")
            .then(|| {
                call.state()
                    .args()
                    .value()
                    .get("file_path")?
                    .as_str()
                    .map(|p| self.root.join(p))
            })
            .flatten();
        Box::pin(async move {
            let mut done = inner.call(call).await?;
            if done.state().outcome() == Outcome::Success
                && let Some(path) = file
                && let Ok(text) = tokio::fs::read_to_string(&path).await
            {
                let formatted: Vec<&str> = text.split('\n').map(str::trim_end).collect();
                let formatted = formatted.join("\n");
                if formatted != text && tokio::fs::write(&path, formatted).await.is_ok() {
                    done.content_mut().push(Content::text(
                        "The file was formatted after the write (trailing spaces removed); read it again before you edit it.",
                    ));
                }
            }
            Ok(done)
        })
    }
}
