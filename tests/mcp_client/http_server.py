#!/usr/bin/env python3
"""A small MCP server speaking streamable HTTP by hand (JSON answers, no
SSE), for the tests of the MCP client's bounds
(tests/mcp/mcp_client_refuses_answers_over_the_bound.rs).

Usage: http_server.py PORT_FILE

It listens on 127.0.0.1 on a free port, writes the port to PORT_FILE and
serves POST /mcp. Tools: echo (returns its text) and flood (returns n
numbered lines, so n = 1,500,000 makes an answer of about 20 MB; with
"sse": true the answer is one event of an event stream instead of a JSON
body).
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSION = "test-session-1"
OBJECT = {"type": "object"}
TOOLS = [
    {"name": "echo", "description": "Returns its text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "flood", "description": "Returns n numbered lines.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}, "sse": {"type": "boolean"}},
                     "required": ["n"]},
     "annotations": {"readOnlyHint": True}},
]


def answer(message):
    method = message.get("method")
    if method == "initialize":
        version = message.get("params", {}).get("protocolVersion", "2025-06-18")
        return {"protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-fake", "version": "1.0.0"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    if method == "tools/call":
        params = message.get("params", {})
        args = params.get("arguments") or {}
        if params.get("name") == "echo":
            return {"content": [{"type": "text", "text": str(args.get("text"))}]}
        if params.get("name") == "flood":
            n = int(args.get("n", 0))
            text = "".join("line %d\n" % i for i in range(1, n + 1))
            return {"content": [{"type": "text", "text": text}]}
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", session=True):
        self.send_response(status)
        if session:
            self.send_header("Mcp-Session-Id", SESSION)
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_GET(self):
        self.reply(405, session=False)

    def do_DELETE(self):
        self.reply(200)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        message = json.loads(self.rfile.read(length))
        if "id" not in message:
            self.reply(202)
            return
        result = answer(message)
        if result is None:
            body = {"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32601, "message": "unknown method"}}
        else:
            body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        if message.get("params", {}).get("arguments", {}).get("sse"):
            self.send_response(200)
            self.send_header("Mcp-Session-Id", SESSION)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"event: message\ndata: " + json.dumps(body).encode() + b"\n\n")
            self.close_connection = True
            return
        self.reply(200, json.dumps(body).encode())


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
