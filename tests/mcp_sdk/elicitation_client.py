#!/usr/bin/env python3
"""A client of `agentcore mcp` that answers approvals with the official
Python MCP SDK's elicitation callback (PyPI `mcp`, 2.x).

    elicitation_client.py BINARY ROOT SCENARIO [SERVER OPTION...]

Starts `BINARY mcp --root ROOT --mode default SERVER OPTION...`, makes the
calls of SCENARIO, answering each question as SCENARIO says, and prints one
JSON object: the calls' results and every question asked. The checks are in
tests/mcp/mcp_approvals_asked_through_the_client.rs, which runs this script.

With the environment variable ELICIT_OVER_HTTP=1 the server is started
with `--http 127.0.0.1:0` and reached with the SDK's streamable-HTTP
client instead of stdio.

Scenarios:
  allow_once  write `once.txt`, then bash `touch by-bash.txt`: each allowed once
  deny        write `denied.txt`: the person chooses deny
  decline     write `declined.txt`: the person declines the form
  session     write `s.txt` twice (a read between): allowed for the session
  timeout     write `late.txt` answered after the server's --ask-timeout
              (allow for the session, too late), then again answered deny
  cancel      write `cancelled.txt`, the call cancelled while the question is open
  bad         write `bad-N.txt` answered with values outside the schema
  none        a client without the elicitation callback: write `none.txt`
  relink      write `x` (a link to `a.txt`); while the question is open the
              link is pointed at `.envrc` (as a background job of the model
              could), then the person allows once
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types

BINARY, ROOT, SCENARIO, *SERVER_OPTIONS = sys.argv[1:]

asked: list[dict] = []
calls: list[dict] = []
state = {"withdrawn": 0, "answered_late": 0}

# Answers outside the requested schema, one per call of the `bad` scenario.
BAD_ANSWERS = [
    {"decision": "allow"},
    {"decision": "ALLOW_ONCE"},
    {"decision": 1},
    {"decision": True},
    {"decision": ["allow_once"]},
    {"decision": "allow_once", "also": "allow_session"},
    {},
    None,
]


def accept(decision: str) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"decision": decision})


async def on_question(context, params) -> types.ElicitResult:
    index = len(asked)
    asked.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
    if SCENARIO == "allow_once":
        return accept("allow_once")
    if SCENARIO == "deny":
        return accept("deny")
    if SCENARIO == "decline":
        return types.ElicitResult(action="decline")
    if SCENARIO == "session":
        return accept("allow_session")
    if SCENARIO == "timeout":
        if index == 0:
            try:
                await anyio.sleep(4)
            except anyio.get_cancelled_exc_class():
                state["withdrawn"] += 1
                raise
            state["answered_late"] += 1
            return accept("allow_session")
        return accept("deny")
    if SCENARIO == "cancel":
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            state["withdrawn"] += 1
            raise
        return accept("allow_once")
    if SCENARIO == "bad":
        return types.ElicitResult(action="accept", content=BAD_ANSWERS[index])
    if SCENARIO == "relink":
        # `ln -sfn .envrc x`: a new link renamed over the old one.
        tmp = os.path.join(ROOT, "x.tmp")
        os.symlink(".envrc", tmp)
        os.rename(tmp, os.path.join(ROOT, "x"))
        return accept("allow_once")
    raise AssertionError(f"no question expected in {SCENARIO}")


def text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def call(session: ClientSession, tool: str, args: dict) -> None:
    result = await session.call_tool(tool, args)
    calls.append({"tool": tool, "is_error": bool(result.is_error), "text": text(result)})


async def scenario(session: ClientSession) -> None:
    if SCENARIO == "allow_once":
        await call(session, "write", {"file_path": "once.txt", "content": "allowed once\n"})
        await call(session, "bash", {"command": "touch by-bash.txt"})
    elif SCENARIO == "deny":
        await call(session, "write", {"file_path": "denied.txt", "content": "x\n"})
    elif SCENARIO == "decline":
        await call(session, "write", {"file_path": "declined.txt", "content": "x\n"})
    elif SCENARIO == "session":
        await call(session, "write", {"file_path": "s.txt", "content": "one\n"})
        await call(session, "read", {"file_path": "s.txt"})
        await call(session, "write", {"file_path": "s.txt", "content": "two\n"})
    elif SCENARIO == "timeout":
        await call(session, "write", {"file_path": "late.txt", "content": "x\n"})
        # Past the callback's late answer: it must not have granted anything.
        await anyio.sleep(4)
        await call(session, "write", {"file_path": "late.txt", "content": "x\n"})
    elif SCENARIO == "cancel":
        with anyio.move_on_after(2):
            await call(session, "write", {"file_path": "cancelled.txt", "content": "x\n"})
        for _ in range(50):
            if state["withdrawn"]:
                break
            await anyio.sleep(0.1)
        await call(session, "read", {"file_path": "present.txt"})
    elif SCENARIO == "bad":
        for i in range(len(BAD_ANSWERS)):
            await call(session, "write", {"file_path": f"bad-{i}.txt", "content": "x\n"})
    elif SCENARIO == "none":
        await call(session, "write", {"file_path": "none.txt", "content": "x\n"})
    elif SCENARIO == "relink":
        await call(session, "write", {"file_path": "x", "content": "export PWNED=1\n"})
    else:
        raise SystemExit(f"unknown scenario {SCENARIO}")


async def over_stdio(callback) -> None:
    params = StdioServerParameters(
        command=BINARY,
        args=["mcp", "--root", ROOT, "--mode", "default", *SERVER_OPTIONS],
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                await scenario(session)


async def over_http(callback) -> None:
    from mcp.client.streamable_http import streamable_http_client

    proc = subprocess.Popen(
        [BINARY, "mcp", "--http", "127.0.0.1:0", "--root", ROOT, "--mode", "default", *SERVER_OPTIONS],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = None
        prefix = "agentcore mcp: listening on "
        for line in proc.stderr:
            if line.startswith(prefix):
                url = line.strip()[len(prefix):]
                break
        if url is None:
            raise SystemExit("agentcore mcp --http never listened")
        async with streamable_http_client(url) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                await scenario(session)
    finally:
        proc.terminate()
        proc.wait(30)


async def main() -> None:
    callback = None if SCENARIO == "none" else on_question
    if os.environ.get("ELICIT_OVER_HTTP") == "1":
        await over_http(callback)
    else:
        await over_stdio(callback)
    print(json.dumps({"calls": calls, "asked": asked, **state}))


if __name__ == "__main__":
    anyio.run(main)
