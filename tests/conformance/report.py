#!/usr/bin/env python3
"""Helpers of tests/conformance/run.sh (no MCP logic of agentcore's is here).

  report.py probe URL OUT.json
      initialize + tools/list against agentcore's HTTP server; writes the
      capabilities it declares and the tools it offers, which decide whether a
      server scenario applies.
  report.py verdict server|client SCENARIO RESULT_DIR [PROBE.json]
      reads the suite's checks.json under RESULT_DIR and prints one line:
      `server  SCENARIO  pass|fail|n.a.  why`.
"""

import glob
import json
import os
import sys
import urllib.request

# What a server scenario needs of the server under test: the suite's fixture
# tool (a tool of the suite's reference "everything server"), or a capability
# the server must declare. A scenario not named here needs nothing special.
SERVER_NEEDS = {
    "completion-complete": ("capability", "completions"),
    "tools-call-simple-text": ("tool", "test_simple_text"),
    "tools-call-image": ("tool", "test_image_content"),
    "tools-call-audio": ("tool", "test_audio_content"),
    "tools-call-embedded-resource": ("tool", "test_embedded_resource"),
    "tools-call-mixed-content": ("tool", "test_multiple_content_types"),
    "tools-call-with-logging": ("tool", "test_tool_with_logging"),
    "tools-call-error": ("tool", "test_error_handling"),
    "tools-call-with-progress": ("tool", "test_tool_with_progress"),
    "tools-call-sampling": ("tool", "test_sampling"),
    "tools-call-elicitation": ("tool", "test_elicitation"),
    "json-schema-2020-12": ("tool", "json_schema_2020_12_tool"),
    "elicitation-sep1034-defaults": ("tool", "test_elicitation_sep1034_defaults"),
    "elicitation-sep1330-enums": ("tool", "test_elicitation_sep1330_enums"),
    "server-sse-polling": ("tool", "test_reconnection"),
    "resources-list": ("capability", "resources"),
    "resources-read-text": ("capability", "resources"),
    "resources-read-binary": ("capability", "resources"),
    "resources-templates-read": ("capability", "resources"),
    "resources-subscribe": ("capability", "resources.subscribe"),
    "resources-unsubscribe": ("capability", "resources.subscribe"),
    "prompts-list": ("capability", "prompts"),
    "prompts-get-simple": ("capability", "prompts"),
    "prompts-get-with-args": ("capability", "prompts"),
    "prompts-get-embedded-resource": ("capability", "prompts"),
    "prompts-get-with-image": ("capability", "prompts"),
}

# Client scenarios the suite passes although agentcore's client did nothing of
# what they test (it never got that far).
# Client scenarios that pass without measuring anything (none since the
# client signs in with OAuth: `auth/resource-mismatch` now sees the sign-in
# refused for the protected-resource metadata's foreign `resource`).
CLIENT_VACUOUS = {}


def post(url, body, session=None, timeout=10):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        session = response.headers.get("Mcp-Session-Id") or session
        text = response.read().decode()
    if "id" not in body:
        return None, session
    for line in text.splitlines():
        data = line[5:].strip() if line.startswith("data:") else line.strip()
        if not data.startswith("{"):
            continue
        message = json.loads(data)
        if message.get("id") == body["id"]:
            return message, session
    raise RuntimeError(f"no answer to {body['method']} in {text[:300]!r}")


def probe(url, out):
    init, session = post(url, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "agentcore-conformance-probe", "version": "1"}}})
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    tools, _ = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
    if session:  # end the session: it would hold one of --max-sessions
        request = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": session})
        try:
            urllib.request.urlopen(request, timeout=5).close()
        except OSError:
            pass
    result = {
        "serverInfo": init["result"].get("serverInfo"),
        "protocolVersion": init["result"].get("protocolVersion"),
        "capabilities": init["result"].get("capabilities", {}),
        "tools": sorted(t["name"] for t in tools["result"]["tools"]),
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"server declares {sorted(result['capabilities'])}, "
          f"offers {len(result['tools'])} tools: {', '.join(result['tools'])}")


def has_capability(capabilities, dotted):
    node = capabilities
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node or node[part] in (None, False):
            return False
        node = node[part]
    return True


def load_checks(result_dir):
    files = sorted(glob.glob(os.path.join(result_dir, "**", "checks.json"), recursive=True))
    if not files:
        return None
    checks = []
    for path in files:
        with open(path) as f:
            checks.extend(json.load(f))
    return checks


def one_line(text, limit=240):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_reasons(checks):
    reasons = []
    for c in checks:
        if c.get("status") != "FAILURE":
            continue
        why = c.get("errorMessage") or (c.get("details") or {}).get("message") or c.get("description")
        reasons.append(f"{c.get('id')}: {why}")
    # The same message repeated (five "Tool was not called" checks) once.
    seen, unique = set(), []
    for r in reasons:
        key = r.split(": ", 1)[-1]
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return unique


def verdict(mode, scenario, result_dir, probe_file=None):
    checks = load_checks(result_dir)
    if checks is None:
        return "fail", "the suite wrote no checks.json (it crashed or timed out; see the log)"
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    passed = [c for c in checks if c.get("status") == "SUCCESS"]
    reasons = failure_reasons(checks)
    counts = f"{len(passed)} checks passed, {len(failed)} failed"

    if mode == "server" and scenario in SERVER_NEEDS and probe_file:
        with open(probe_file) as f:
            probed = json.load(f)
        kind, name = SERVER_NEEDS[scenario]
        if kind == "tool" and name not in probed["tools"]:
            lack = f"needs the suite's fixture tool `{name}`, which agentcore does not offer"
        elif kind == "capability" and not has_capability(probed["capabilities"], name):
            lack = f"agentcore does not declare the `{name}` capability"
        else:
            lack = None
        if lack:
            if not failed:
                return "n.a.", (f"{lack}; the suite says pass only vacuously "
                                f"({counts}: the \"tool not found\" error result satisfies the check)")
            extra = ""
            if passed:
                extra = "; what it checks besides passes: " + ", ".join(
                    c.get("id") for c in passed)
            return "n.a.", f"{lack} (suite: {'; '.join(reasons)}){extra}"

    if not failed:
        if mode == "client" and scenario in CLIENT_VACUOUS:
            return "pass", f"{counts}; vacuous: {CLIENT_VACUOUS[scenario]}"
        return "pass", counts
    return "fail", f"{counts}: " + "; ".join(reasons)


def main(argv):
    if len(argv) >= 3 and argv[0] == "probe":
        probe(argv[1], argv[2])
        return 0
    if len(argv) >= 4 and argv[0] == "verdict":
        mode, scenario, result_dir = argv[1], argv[2], argv[3]
        status, why = verdict(mode, scenario, result_dir, argv[4] if len(argv) > 4 else None)
        print(f"{mode:<6}  {scenario:<42}  {status:<4}  {one_line(why, 400)}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
