//! `agentcore mcp` over its stdio, initialized, with a line-by-line
//! JSON-RPC client.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// A line-by-line JSON-RPC client over the child's stdio.
pub struct Client {
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: i64,
}

impl Client {
    /// The result of `method`, skipping notifications.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server closed the connection"
            );
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer
                    .get("result")
                    .cloned()
                    .unwrap_or_else(|| panic!("expected a result: {answer}"));
            }
        }
    }

    pub fn notify(&mut self, method: &str) {
        writeln!(
            self.input,
            "{}",
            json!({"jsonrpc": "2.0", "method": method})
        )
        .unwrap();
        self.input.flush().unwrap();
    }

    /// The text of a `tools/call` result, and whether it is an error.
    pub fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let result = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let text = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"] == true)
    }
}

/// `agentcore mcp ARGS` with its state directory (the default store's
/// home) in `state`, initialized.
pub fn serve(args: &[&str], state: &std::path::Path) -> (Child, Client) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .arg("mcp")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentcore mcp starts");
    let mut client = Client {
        input: child.stdin.take().unwrap(),
        output: BufReader::new(child.stdout.take().unwrap()),
        next_id: 1,
    };
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "agentcore-test", "version": "0"}}),
    );
    client.notify("notifications/initialized");
    (child, client)
}
