#!/usr/bin/env python3
"""An MCP server over stdio that writes the `initialize` params it got to
$VERSION_LOG and answers with the protocol version $ANSWER_VERSION, for
tests/mcp/mcp_client_negotiates_the_protocol_version.rs. With $BIG_ANSWER set,
its one tool (`big`) answers with a line of that many bytes."""
import json
import os
import sys

ANSWER = os.environ.get("ANSWER_VERSION", "")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        with open(os.environ["VERSION_LOG"], "a") as f:
            f.write(json.dumps(message["params"]) + "\n")
        version = ANSWER or message["params"]["protocolVersion"]
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "version-server", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
            {"name": "hello", "description": "Says hello.", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}},
            {"name": "big", "description": "Answers big.", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}}]}})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "big":
            size = int(os.environ.get("BIG_ANSWER", "0"))
            head = '{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "' % json.dumps(message["id"])
            tail = '"}]}}\n'
            sys.stdout.write(head + "x" * max(0, size - len(head) - len(tail)) + tail)
            sys.stdout.flush()
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "content": [{"type": "text", "text": "hello from version-server"}]}})
    elif "id" in message and method is not None:
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})
