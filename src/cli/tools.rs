//! `agentcore tools`: the chosen built-in tools' definitions (`--tools`,
//! default: the default set) in three shapes.

use std::process::ExitCode;

use agentcore::message::{anthropic, openai};
use agentcore::{Tool, ToolRegistry};
use serde_json::{Value, json};

use super::args::{ToolsArgs, ToolsFormat};
use agentcore::session::{Session, SessionConfig};

/// The definitions of every tool in `registry`, in `format`.
pub fn definitions(registry: &ToolRegistry, format: ToolsFormat) -> Value {
    let each = |shape: fn(&dyn Tool) -> Value| {
        Value::Array(registry.iter().map(|e| shape(e.tool().as_ref())).collect())
    };
    match format {
        // Exactly what the MCP server's tools/list answers.
        ToolsFormat::Mcp => json!({ "tools": agentcore::mcp::tool_definitions(registry) }),
        ToolsFormat::Anthropic => each(anthropic::tool_definition),
        ToolsFormat::Openai => each(openai::tool_definition),
    }
}

/// Prints the definitions.
pub fn print(args: ToolsArgs) -> ExitCode {
    let mut config = SessionConfig::new(std::env::temp_dir());
    if let Some(tools) = args.tools {
        config.tools = tools;
    }
    let session = match Session::start(config) {
        Ok(session) => session,
        Err(err) => {
            eprintln!("agentcore tools: {err}");
            return ExitCode::from(1);
        }
    };
    let value = definitions(session.registry(), args.format);
    match serde_json::to_string_pretty(&value) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("agentcore tools: {err}");
            ExitCode::from(1)
        }
    }
}
