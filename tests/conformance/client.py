#!/usr/bin/env python3
"""Client runner for the MCP conformance suite's client scenarios.

The suite (`conformance client --command "python3 client.py"`) starts a test
server for one scenario, then runs this script with the server's URL as the
last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO (and, for
some auth scenarios, a JSON object in MCP_CONFORMANCE_CONTEXT).

This runner does what a user of agentcore does: it writes a policy file that
mounts the URL through `[[mcp_servers]]` and lets agentcore's own MCP client
talk to it:

- `initialize`: `agentcore tools --policy FILE` (initialize + tools/list);
- every other scenario: `agentcore run --policy FILE` with one turn that calls
  the scenario's tool as `mcp__conf__TOOL` (allowed by a policy rule, so no
  approval is needed), e.g. `add_numbers` for `tools_call`;
- `elicitation-sep1034-client-defaults`: the server's question must reach a
  person who accepts it. With no terminal, `agentcore run` has nobody to ask,
  so this scenario drives `agentcore mcp --policy FILE` over stdio instead, as
  an MCP client that declares elicitation and accepts every question with
  empty content (`{"action": "accept", "content": {}}`): agentcore should pass
  the question up (issue 32 item 3) and fill in the schema's defaults (SEP-1034)
  before answering the suite's server. Set CONFORMANCE_ELICIT_VIA=run to use
  `agentcore run` for it too.

- `auth/*`: the suite's server wants OAuth. As a user would, the runner signs
  in first with `agentcore mcp login conf --policy FILE`, with a `$BROWSER`
  that follows the authorization URL like a person who clicks "allow" (the
  suite's authorization server redirects at once; `curl -L` carries the
  redirect to agentcore's loopback listener), tokens kept under a scratch
  `XDG_STATE_HOME`; then `agentcore run` gets a terminal on stdin (a pty), so
  a step-up the server asks for mid-session is signed in to the same way.
  Client credentials in MCP_CONFORMANCE_CONTEXT (`client_id`,
  `client_secret`) go into the entry's `oauth = { … }` (with
  `client_credentials = true` for `auth/client-credentials-basic`, the
  machine-to-machine grant); `auth/basic-cimd` gives the client-id metadata
  document URL the suite expects.

It does no MCP or OAuth itself: whatever the suite measures is agentcore's
client. It exits 0 when agentcore mounted the server and the call ended in
success, 1 otherwise (the suite judges by its own checks, not by this code).

Environment:
  AGENTCORE            the agentcore binary (default: `agentcore` on PATH)
  CONFORMANCE_TIMEOUT  seconds agentcore waits for the server's start and call
                       (default 20; the suite kills the client after 30 s)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

SERVER = "conf"

# The tool each scenario's test server offers, and the arguments to call it
# with. A scenario not named here: the first tool the server lists, with {}.
TOOLS = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
# Every auth/* scenario's server offers `test-tool` behind OAuth.
AUTH_TOOL = ("test-tool", {})


def log(*parts):
    print("[client.py]", *parts, file=sys.stderr, flush=True)


def toml_string(value):
    return json.dumps(value)  # a JSON string is a valid TOML basic string


# The client-id metadata document URL auth/basic-cimd expects (the suite
# does not fetch it).
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def write_policy(path, url, timeout, oauth=None):
    with open(path, "w") as f:
        f.write(
            "# written by tests/conformance/client.py\n"
            f'allow = ["mcp__{SERVER}"]\n\n'
            "[[mcp_servers]]\n"
            f'name = "{SERVER}"\n'
            f"url = {toml_string(url)}\n"
            f"startup_timeout_secs = {timeout}\n"
            f"call_timeout_secs = {timeout}\n"
        )
        if oauth:
            fields = ", ".join(
                f"{k} = {'true' if v is True else toml_string(v)}" for k, v in oauth.items())
            f.write(f"oauth = {{ {fields} }}\n")


def oauth_entry(scenario):
    """The entry's `oauth = { ... }` for a scenario: the context's client
    credentials, or the metadata document URL of auth/basic-cimd."""
    oauth = {}
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError:
        context = {}
    if isinstance(context, dict):
        for key in ("client_id", "client_secret"):
            if isinstance(context.get(key), str):
                oauth[key] = context[key]
    if scenario == "auth/basic-cimd":
        oauth["client_metadata_url"] = CIMD_URL
    if scenario == "auth/client-credentials-basic":
        # Machine to machine: the grant, not a person's sign-in.
        oauth["client_credentials"] = True
    return oauth


def write_browser(path):
    """A $BROWSER that does what a person who allows the sign-in does: it
    follows the authorization URL, and the authorization server's redirect
    to agentcore's loopback listener."""
    with open(path, "w") as f:
        f.write('#!/bin/sh\nexec curl -s -L --max-time 20 -o /dev/null "$1"\n')
    os.chmod(path, 0o755)


def run_on_terminal(cmd, stdin, timeout):
    """`cmd` with a terminal (a pty) on stdin, as a person runs it: `stdin`
    is typed, then end of input."""
    import pty
    import select
    import time

    log("$", " ".join(cmd), "(stdin a terminal)")
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    os.close(slave)
    os.write(master, stdin.encode() + b"\n\x04")
    deadline = time.time() + timeout
    out = []
    err = []

    def pump(stream, into):
        for line in stream:
            into.append(line)

    threads = [threading.Thread(target=pump, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err), daemon=True)]
    for t in threads:
        t.start()
    while proc.poll() is None and time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                os.read(master, 4096)  # the terminal's echo
            except OSError:
                pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for t in threads:
        t.join(timeout=2)
    os.close(master)
    sys.stdout.write("".join(out))
    sys.stderr.write("".join(err))
    log("exit status", proc.returncode)
    return proc.returncode


def run(cmd, stdin=None, timeout=None):
    log("$", " ".join(cmd))
    proc = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, timeout=timeout
    )
    if proc.stdout:
        sys.stdout.write(proc.stdout)
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    log("exit status", proc.returncode)
    return proc


def mounted_tools(agentcore, policy, timeout):
    """The names of the mounted server's tools, as `agentcore tools` lists them
    (initialize + tools/list; a server that cannot be mounted is reported on
    stderr and the listing goes on without it)."""
    cmd = [agentcore, "tools", "--policy", policy, "--format", "mcp"]
    log("$", " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    sys.stderr.write(proc.stderr)
    try:
        tools = json.loads(proc.stdout)["tools"]
    except (ValueError, KeyError, TypeError):
        tools = []
    prefix = f"mcp__{SERVER}__"
    names = [t["name"] for t in tools if t.get("name", "").startswith(prefix)]
    log("exit status", proc.returncode, "mounted:", names)
    return proc, names


def call_through_mcp(agentcore, policy, root, tool, args, timeout):
    """Call `tool` through `agentcore mcp --policy FILE` on stdio, as an MCP
    client that declares elicitation and accepts every question with empty
    content. True when the call's result is not an error."""
    cmd = [agentcore, "mcp", "--policy", policy, "--root", root]
    log("$", " ".join(cmd), "(stdio MCP client that accepts elicitations)")
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr, text=True
    )

    def send(message):
        log(">>", json.dumps(message)[:500])
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def wait_for(request_id):
        for line in proc.stdout:
            log("<<", line.strip()[:500])
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("method") == "elicitation/create" and "id" in message:
                send({"jsonrpc": "2.0", "id": message["id"],
                      "result": {"action": "accept", "content": {}}})
            elif message.get("method") == "ping" and "id" in message:
                send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            elif "method" in message and "id" in message:
                send({"jsonrpc": "2.0", "id": message["id"],
                      "error": {"code": -32601, "message": "not supported by client.py"}})
            elif message.get("id") == request_id and "method" not in message:
                return message
        return None

    # The suite gives a client 30 s; end agentcore before that, so its
    # stdout ends and the reads below return.
    watchdog = threading.Timer(timeout + 5, proc.kill)
    watchdog.start()
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "agentcore-conformance-client.py", "version": "1"}}})
        if wait_for(1) is None:
            return False
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": f"mcp__{SERVER}__{tool}", "arguments": args}})
        answer = wait_for(2)
        return bool(answer and "result" in answer and not answer["result"].get("isError"))
    finally:
        watchdog.cancel()
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    if len(sys.argv) < 2:
        print("usage: client.py SERVER_URL (run by the conformance suite)", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    agentcore = os.environ.get("AGENTCORE") or shutil.which("agentcore") or "agentcore"
    timeout = int(os.environ.get("CONFORMANCE_TIMEOUT", "20"))
    log("scenario", repr(scenario), "url", url)
    if os.environ.get("MCP_CONFORMANCE_CONTEXT"):
        log("context:", os.environ["MCP_CONFORMANCE_CONTEXT"])

    work = tempfile.mkdtemp(prefix="agentcore-conf-")
    try:
        root = os.path.join(work, "ws")
        os.mkdir(root)
        policy = os.path.join(work, "policy.toml")
        auth = scenario.startswith("auth/")
        write_policy(policy, url, timeout, oauth_entry(scenario) if auth else None)
        if auth:
            # Tokens go to a scratch state directory, and the "browser"
            # allows every sign-in.
            os.environ["XDG_STATE_HOME"] = os.path.join(work, "state")
            browser = os.path.join(work, "browser.sh")
            write_browser(browser)
            os.environ["BROWSER"] = browser
            run([agentcore, "mcp", "login", SERVER, "--policy", policy,
                 "--timeout", str(timeout)], timeout=timeout + 5)

        proc, names = mounted_tools(agentcore, policy, timeout + 5)
        if scenario == "initialize":
            return 0 if proc.returncode == 0 else 1
        if not names:
            log(f"agentcore mounted no tool of {url}")
            # Still try the call: the run's events say why the mount failed.

        if scenario in TOOLS:
            tool, args = TOOLS[scenario]
        elif scenario.startswith("auth/"):
            tool, args = AUTH_TOOL
        elif names:
            tool, args = names[0][len(f"mcp__{SERVER}__"):], {}
        else:
            return 1
        if (scenario == "elicitation-sep1034-client-defaults"
                and os.environ.get("CONFORMANCE_ELICIT_VIA", "mcp") != "run"):
            ok = call_through_mcp(agentcore, policy, root, tool, args, timeout)
            return 0 if ok else 1
        call = {"turn": [{"id": "c1", "name": f"mcp__{SERVER}__{tool}", "args": args}]}
        if auth:
            code = run_on_terminal(
                [agentcore, "run", "--policy", policy, "--root", root,
                 "--format", "jsonl", "--fail-on-error"],
                json.dumps(call), timeout + 5)
            return 0 if code == 0 else 1
        proc = run(
            [agentcore, "run", "--policy", policy, "--root", root,
             "--format", "jsonl", "--fail-on-error"],
            stdin=json.dumps(call) + "\n",
            timeout=timeout + 5,
        )
        return 0 if proc.returncode == 0 else 1
    except subprocess.TimeoutExpired as e:
        log("agentcore did not finish in time:", e)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
