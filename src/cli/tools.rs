//! `agentcore tools`: the built-in tools' definitions in three shapes.

use std::process::ExitCode;

use agentcore_stages::{ToolRegistry, tool::Tool};
use serde_json::{Value, json};

use super::args::{ToolsArgs, ToolsFormat};
use crate::session::{Session, SessionConfig};

/// MCP annotations from a tool's capabilities with default args: read-only
/// tools `readOnlyHint: true`; others `readOnlyHint: false,
/// destructiveHint: true`; the label as title.
pub fn mcp_annotations(tool: &dyn Tool) -> Value {
    let read_only = tool.read_only(&json!({}));
    let mut annotations = if read_only {
        json!({"readOnlyHint": true})
    } else {
        json!({"readOnlyHint": false, "destructiveHint": true})
    };
    if let Some(label) = tool.label() {
        annotations["title"] = json!(label);
    }
    annotations
}

/// The definitions of every tool in `registry`, in `format`.
pub fn definitions(registry: &ToolRegistry, format: ToolsFormat) -> Value {
    let tools = registry.iter().map(|entry| {
        let tool = entry.tool().as_ref();
        match format {
            ToolsFormat::Mcp => json!({
                "name": tool.name(),
                "description": tool.description(),
                "inputSchema": tool.schema(),
                "annotations": mcp_annotations(tool),
            }),
            ToolsFormat::Anthropic => json!({
                "name": tool.name(),
                "description": tool.description(),
                "input_schema": tool.schema(),
            }),
            ToolsFormat::Openai => json!({
                "type": "function",
                "function": {
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": tool.schema(),
                },
            }),
        }
    });
    let tools: Vec<Value> = tools.collect();
    match format {
        ToolsFormat::Mcp => json!({ "tools": tools }),
        ToolsFormat::Anthropic | ToolsFormat::Openai => Value::Array(tools),
    }
}

/// Prints the definitions.
pub fn print(args: ToolsArgs) -> ExitCode {
    let root = std::env::temp_dir();
    let session = match Session::start(SessionConfig::new(root)) {
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
