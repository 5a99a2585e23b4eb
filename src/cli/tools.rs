//! `agentcore tools`: the tools' definitions in three shapes: the chosen
//! built-in tools (`--tools`, default: the default set), and with
//! `--policy` the tools of its `[[mcp_servers]]`.

use std::process::ExitCode;

use agentcore::ToolRegistry;
use agentcore::message::{anthropic, openai};
use serde_json::{Value, json};

use super::args::{ToolsArgs, ToolsFormat};
use super::out::{errln, outln};
use agentcore::session::{Session, SessionConfig};

/// The definitions of every tool in `registry`, in `format`.
pub fn definitions(registry: &ToolRegistry, format: ToolsFormat) -> Value {
    match format {
        // Exactly what the MCP server's tools/list answers.
        ToolsFormat::Mcp => json!({ "tools": agentcore::mcp::tool_definitions(registry) }),
        ToolsFormat::Anthropic => Value::Array(anthropic::tool_definitions(registry)),
        ToolsFormat::Openai => Value::Array(openai::tool_definitions(registry)),
    }
}

/// Prints the definitions. A policy that cannot be read is exit status 2;
/// an MCP server that cannot be mounted is reported on stderr and its tools
/// are missing from the list.
pub async fn print(args: ToolsArgs) -> ExitCode {
    let mut config = SessionConfig::new(std::env::temp_dir());
    // `checkpoints` and `rewind` need a recorder: one over an empty
    // folder, recording into another, both removed at the end.
    let mut scratch = Vec::new();
    if let Some(tools) = args.tools {
        if tools.iter().any(|tool| tool.needs_checkpoints()) {
            let (root, store) = match (tempfile::tempdir(), tempfile::tempdir()) {
                (Ok(root), Ok(store)) => (root, store),
                (Err(err), _) | (_, Err(err)) => {
                    errln!("agentcore tools: cannot make a scratch folder: {err}");
                    return ExitCode::from(1);
                }
            };
            config.root = root.path().to_path_buf();
            config.checkpoints = agentcore::checkpoint::CheckpointConfig {
                store: Some(store.path().to_path_buf()),
                ..agentcore::checkpoint::CheckpointConfig::default()
            };
            scratch.extend([root, store]);
        }
        config.tools = tools;
    }
    if let Some(path) = &args.policy {
        match agentcore::config::Policy::load(path) {
            Ok(policy) => config.policy = Some(policy),
            Err(err) => {
                errln!("agentcore tools: {err}");
                return ExitCode::from(2);
            }
        }
    }
    let session = match Session::connect(config).await {
        Ok(session) => session,
        Err(err) => {
            errln!("agentcore tools: {err}");
            return ExitCode::from(1);
        }
    };
    for failure in session.mcp_failures() {
        errln!("agentcore tools: {failure}");
    }
    let code = print_definitions(&session, args.format);
    session.end_mcp().await;
    // The session lets go of the store before its folder goes.
    drop(session);
    drop(scratch);
    code
}

fn print_definitions(session: &Session, format: ToolsFormat) -> ExitCode {
    let value = definitions(session.registry(), format);
    match serde_json::to_string_pretty(&value) {
        Ok(text) => {
            outln!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            errln!("agentcore tools: {err}");
            ExitCode::from(1)
        }
    }
}
