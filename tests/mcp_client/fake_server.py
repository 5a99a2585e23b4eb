#!/usr/bin/env python3
"""A small MCP server speaking JSON-RPC over stdio by hand, for the tests of
the MCP client (tests/mcp/mcp_client_mounts_external_servers.rs).

Usage: fake_server.py [normal|slow-start|exit-at-start|hostile|many]

Tools: echo (read-only), kinds (every content kind), count (progress),
flood (n numbered lines), pictures (n small PNG images), ask (elicitation),
fail (isError), crash (exits mid-call), retire (drops echo
from the list and says so with notifications/tools/list_changed), hire (adds
the read-only tool fresh and says so the same way), hang (never answers; a
notifications/cancelled for it is written to $FAKE_MCP_LOG), create_issue
and delete_repo (destructive).
"""
import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"

if MODE == "slow-start":
    sys.stderr.write("fake server: warming up the flux capacitor\n")
    sys.stderr.flush()
    time.sleep(60)
    sys.exit(0)
if MODE == "exit-at-start":
    sys.stderr.write("fake server: missing FAKE_TOKEN, giving up\n")
    sys.stderr.flush()
    sys.exit(2)

OBJECT = {"type": "object"}
TOOLS = [
    {"name": "echo", "description": "Returns its text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "kinds", "description": "Returns one block of every kind.", "inputSchema": OBJECT,
     "annotations": {"readOnlyHint": True}},
    {"name": "count", "description": "Counts to n with progress.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "fail", "description": "Always fails.", "inputSchema": OBJECT},
    {"name": "crash", "description": "Dies mid-call.", "inputSchema": OBJECT},
    {"name": "hang", "description": "Never answers.", "inputSchema": OBJECT},
    {"name": "create_issue", "description": "Files an issue.",
     "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
     "annotations": {"destructiveHint": False}},
    {"name": "retire", "description": "Stops offering echo.", "inputSchema": OBJECT,
     "annotations": {"readOnlyHint": True}},
    {"name": "delete.repo", "description": "Deletes a repository.", "inputSchema": OBJECT,
     "annotations": {"destructiveHint": True}},
    {"name": "hire", "description": "Starts offering fresh.", "inputSchema": OBJECT,
     "annotations": {"readOnlyHint": True}},
    {"name": "flood", "description": "Returns n numbered lines.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "ask", "description": "Asks the user a question (elicitation) and returns the answer.",
     "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "pictures", "description": "Returns n small PNG images.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
     "annotations": {"readOnlyHint": True}},
]
# What the client said it can do, in initialize.
CLIENT_CAPS = {}
# A PNG signature and a few bytes: what read recognises as an image.
PNG = "iVBORw0KGgpGQUtF"
FRESH = {"name": "fresh", "description": "Says it is new.",
         "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
         "annotations": {"readOnlyHint": True}}

if MODE == "hostile":
    # Names that would shadow a built-in or collide once sanitised, and a
    # schema that is not one.
    TOOLS = [
        {"name": "read", "description": "Not the built-in read.", "inputSchema": OBJECT,
         "annotations": {"readOnlyHint": True}},
        {"name": "a.b", "description": "First of two.", "inputSchema": OBJECT},
        {"name": "a b", "description": "Second of two.", "inputSchema": OBJECT},
        {"name": "bad", "description": "Broken schema.", "inputSchema": {"type": 12}},
        {"name": "ok", "description": "Fine.", "inputSchema": OBJECT},
    ]

if MODE == "many":
    # 120 tools with long descriptions: about 20,000 tokens of definitions,
    # past the default budget of tool_search.
    TOOLS = [
        {"name": "tool_%d" % i,
         "description": "Does task number %d.\n" % i + ("Details of the task, said at length. " * 14),
         "inputSchema": {"type": "object",
                         "properties": {"count": {"type": "integer", "minimum": 1},
                                        "label": {"type": "string"}},
                         "required": ["count"]},
         "annotations": {"readOnlyHint": True}}
        for i in range(120)
    ]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(line):
    path = os.environ.get("FAKE_MCP_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


def call(id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if name == "echo":
        result(id, {"content": [{"type": "text", "text": "echo: " + str(args.get("text"))}]})
    elif name == "kinds":
        result(id, {
            "content": [
                {"type": "text", "text": "plain words"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///notes.md", "name": "notes.md"},
                {"type": "resource", "resource": {"uri": "mem://readme", "mimeType": "text/plain", "text": "embedded text"}},
            ],
            "structuredContent": {"answer": 42},
        })
    elif name == "count":
        n = int(args.get("n", 0))
        for i in range(1, n + 1):
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i, "total": n, "message": "step %d" % i}})
            time.sleep(0.05)
        result(id, {"content": [{"type": "text", "text": "counted to %d" % n}]})
    elif name == "fail":
        result(id, {"content": [{"type": "text", "text": "the widget is jammed"}], "isError": True})
    elif name == "crash":
        sys.stderr.write("fake server: segmentation fault in crash()\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "hang":
        log("hang started %s" % json.dumps(id))
    elif name == "create_issue":
        result(id, {"content": [{"type": "text", "text": "created issue: " + str(args.get("title"))}]})
    elif name == "retire":
        TOOLS[:] = [t for t in TOOLS if t["name"] != "echo"]
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        # The client handles notifications on tasks of their own: give it
        # time before the answer ends the call.
        time.sleep(0.3)
        result(id, {"content": [{"type": "text", "text": "echo retired"}]})
    elif name == "hire":
        if FRESH not in TOOLS:
            TOOLS.append(FRESH)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        time.sleep(0.3)
        result(id, {"content": [{"type": "text", "text": "fresh hired"}]})
    elif name == "fresh":
        result(id, {"content": [{"type": "text", "text": "fresh %s" % json.dumps(args.get("n"))}]})
    elif name == "ask":
        if not CLIENT_CAPS.get("elicitation"):
            result(id, {"content": [{"type": "text", "text": "answer: the client cannot ask"}]})
            return
        properties = {
            "name": {"type": "string", "title": "Name"},
            "colour": {"type": "string", "default": "blue"}}
        if args.get("huge"):
            # A form of 100,000 fields: too large to put to a person.
            for i in range(100000):
                properties["field%d" % i] = {"type": "string"}
        send({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create", "params": {
            "message": "Which name?\x1b[31m (and a colour)",
            "requestedSchema": {"type": "object", "properties": properties,
                                "required": ["name"]}}})
        # The answer comes on stdin before anything else this server waits for.
        for reply in sys.stdin:
            reply = json.loads(reply)
            if reply.get("id") == "q1":
                break
        answer = reply.get("result") or {}
        result(id, {"content": [{"type": "text", "text": "answer: %s %s" % (
            answer.get("action"), json.dumps(answer.get("content"), sort_keys=True))}]})
    elif name == "flood":
        n = int(args.get("n", 0))
        text = "".join("line %d\n" % i for i in range(1, n + 1))
        result(id, {"content": [{"type": "text", "text": text}]})
    elif name == "pictures":
        n = int(args.get("n", 0))
        result(id, {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"} for _ in range(n)]})
    elif MODE == "many" and name.startswith("tool_"):
        result(id, {"content": [{"type": "text", "text": "%s did %s" % (name, json.dumps(args.get("count")))}]})
    elif name == "delete.repo":
        result(id, {"content": [{"type": "text", "text": "deleted"}]})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "unknown tool " + str(name)}})


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    message = json.loads(line)
    method = message.get("method")
    id = message.get("id")
    if method == "initialize":
        CLIENT_CAPS = (message.get("params") or {}).get("capabilities") or {}
        result(id, {"protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "fake", "version": "1.0"}})
    elif method == "tools/list":
        result(id, {"tools": TOOLS})
    elif method == "tools/call":
        call(id, message.get("params") or {})
    elif method == "notifications/cancelled":
        log("cancelled %s" % json.dumps((message.get("params") or {}).get("requestId")))
    elif method == "ping":
        result(id, {})
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no " + method}})
