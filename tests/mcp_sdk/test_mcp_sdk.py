#!/usr/bin/env python3
"""`agentcore mcp` driven by the official Python MCP SDK (PyPI `mcp`).

Run by .ci/run with the SDK installed in a virtual environment:

    python3 -m venv .venv && .venv/bin/pip install mcp
    .venv/bin/python tests/mcp_sdk/test_mcp_sdk.py target/debug/agentcore

Every check must run; any failure exits non-zero.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/agentcore"
FAILURES: list[str] = []


def check(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def dump(model) -> dict:
    return model.model_dump(by_alias=True, exclude_none=True)


async def with_server(root: Path, mode: str, body) -> None:
    params = StdioServerParameters(
        command=BINARY, args=["mcp", "--root", str(root), "--mode", mode]
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check(init.server_info.name == "agentcore", f"[{mode}] initialize names agentcore")
                await body(session)


def processes_with(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if marker in cmdline and "State:\tZ" not in status:
            found.append(entry.name)
    return found


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="agentcore-mcp-sdk-", ignore_cleanup_errors=True) as tmp:
        await run(Path(tmp))


async def run(root: Path) -> None:
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "src").mkdir()
    (root / "src" / "lib.rs").write_text("pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n")

    async def listing(session: ClientSession) -> None:
        tools = {t.name: dump(t) for t in (await session.list_tools()).tools}
        check(sorted(tools) == ["bash", "bash_output", "edit", "glob", "grep", "kill_shell", "ls", "multi_edit", "read", "write", "write_stdin"], "tools/list has the built-in tools")
        check(tools["read"]["annotations"].get("readOnlyHint") is True, "read is readOnlyHint")
        check(tools["bash"]["annotations"].get("readOnlyHint") is False, "bash is not readOnlyHint")
        check(tools["edit"]["annotations"].get("destructiveHint") is True, "edit is destructiveHint")
        check(tools["write"]["inputSchema"].get("additionalProperties") is False, "schemas are strict")

    async def edits(session: ClientSession) -> None:
        refused = await session.call_tool("edit", {"file_path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})
        check(refused.is_error and "has not been read yet" in text(refused), "edit without a read is refused")
        read = await session.call_tool("read", {"file_path": "src/lib.rs"})
        check(not read.is_error and "a - b" in text(read), "read succeeds")
        edit = await session.call_tool("edit", {"file_path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})
        check(not edit.is_error and "updated successfully" in text(edit), "edit after the read succeeds")
        check("a + b" in (root / "src" / "lib.rs").read_text(), "the edit is on disk")
        grep = await session.call_tool("grep", {"pattern": "fn add", "output_mode": "content"})
        check(not grep.is_error and "src/lib.rs:1:" in text(grep), "grep finds the function")

    async def commands(session: ClientSession) -> None:
        updates: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append(progress)

        result = await session.call_tool(
            "bash",
            {"command": "for i in 1 2 3 4 5; do echo line $i; sleep 0.2; done"},
            progress_callback=on_progress,
        )
        check(not result.is_error and "Exit code: 0" in text(result), "bash runs in bypass mode")
        check(len(updates) >= 2 and updates == sorted(updates), f"progress notifications arrive in order ({len(updates)})")

        marker = "31.4159"
        started = time.monotonic()
        with anyio.move_on_after(1.0):
            await session.call_tool("bash", {"command": f"sleep {marker}"})
        check(time.monotonic() - started < 5, "a cancelled call returns at once")
        gone = False
        for _ in range(50):
            if not processes_with(f"sleep {marker}"):
                gone = True
                break
            await anyio.sleep(0.1)
        check(gone, "the cancelled command's process is gone")
        after = await session.call_tool("bash", {"command": "echo still here"})
        check(not after.is_error and "still here" in text(after), "the server keeps serving after a cancel")

    async def refusals(session: ClientSession) -> None:
        result = await session.call_tool("write", {"file_path": "new.txt", "content": "x"})
        check(result.is_error and "approval required" in text(result), "default mode refuses a write")
        check(not (root / "new.txt").exists(), "nothing was written")

    await with_server(root, "default", listing)
    await with_server(root, "accept-edits", edits)
    await with_server(root, "bypass", commands)
    await with_server(root, "default", refusals)


if __name__ == "__main__":
    anyio.run(main)
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed: {FAILURES}")
    print("all MCP SDK checks passed")
