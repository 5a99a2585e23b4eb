#!/usr/bin/env python3
"""`agentcore mcp --http` driven by the official Python MCP SDK's
streamable-HTTP client (PyPI `mcp`).

Run by tests/mcp/mcp_http_face_python_sdk.rs with the SDK's Python (.ci/run sets
AGENTCORE_MCP_SDK_PYTHON), or by hand:

    .venv/bin/python tests/mcp_sdk/test_mcp_http.py target/debug/agentcore

Every check must run; any failure exits non-zero.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import logging

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/agentcore"
TOKEN = "sdk-http-token-0123456789abcdef"
FAILURES: list[str] = []


def check(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


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


class Server:
    """`agentcore mcp --http 0.0.0.0:0` with a token; the address it printed."""

    def __init__(self, root: Path) -> None:
        env = dict(os.environ, AGENTCORE_MCP_TOKEN=TOKEN)
        self.proc = subprocess.Popen(
            [BINARY, "mcp", "--http", "0.0.0.0:0", "--mode", "bypass", "--root", str(root)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        ready = threading.Event()
        self.port = 0

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr.append(line)
                prefix = "agentcore mcp: listening on http://"
                if line.startswith(prefix):
                    self.port = int(line.strip()[len(prefix):].removesuffix("/mcp").rsplit(":", 1)[1])
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(60):
            raise SystemExit("agentcore mcp --http never listened: " + "".join(self.stderr))
        # Bound to every address; reached through loopback.
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(30)


def client(token: str | None) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return create_mcp_http_client(headers=headers)


class Warnings(logging.Handler):
    """The SDK's warnings (e.g. a DELETE it takes for a failure)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage())


WARNINGS = Warnings()
logging.getLogger("mcp").addHandler(WARNINGS)


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="agentcore-mcp-http-", ignore_cleanup_errors=True) as tmp:
        await run(Path(tmp))


async def run(root: Path) -> None:
    (root / "a.txt").write_text("alpha\nbeta\n")
    server = Server(root)
    try:
        await drive(server, root)
        await refusals(server)
    finally:
        code = server.stop()
        check(code == 0, f"SIGTERM stops the server with status 0 ({code})")


async def drive(server: Server, root: Path) -> None:
    async with client(TOKEN) as http:
        async with streamable_http_client(server.url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check(init.server_info.name == "agentcore", "initialize names agentcore")
                names = sorted(t.name for t in (await session.list_tools()).tools)
                check("read" in names and "bash" in names and "edit" in names, f"tools/list has the built-in tools ({names})")

                read = await session.call_tool("read", {"file_path": "a.txt"})
                check(not read.is_error and "alpha" in text(read), "a read call returns the file")
                edit = await session.call_tool("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"})
                check(not edit.is_error, "an edit after the read succeeds")
                check((root / "a.txt").read_text() == "alpha\ngamma\n", "the edit landed")

                updates: list[float] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    updates.append(progress)

                result = await session.call_tool(
                    "bash",
                    {"command": "for i in 1 2 3 4 5; do echo line $i; sleep 0.2; done"},
                    progress_callback=on_progress,
                )
                check(not result.is_error and "Exit code: 0" in text(result), "bash runs over HTTP")
                check(len(updates) >= 2 and updates == sorted(updates), f"progress notifications arrive in order ({len(updates)})")

                marker = "27.1828"
                started = time.monotonic()
                with anyio.move_on_after(1.0):
                    await session.call_tool("bash", {"command": f"sleep {marker}"})
                check(time.monotonic() - started < 5, "a cancelled call returns at once")
                gone = False
                for _ in range(100):
                    if not processes_with(f"sleep {marker}"):
                        gone = True
                        break
                    await anyio.sleep(0.1)
                check(gone, "the cancelled command's process is gone")
                after = await session.call_tool("bash", {"command": "echo still here"})
                check(not after.is_error and "still here" in text(after), "the session keeps serving after a cancel")

                job_marker = "41.4142"
                job = await session.call_tool("bash", {"command": f"exec sleep {job_marker}", "run_in_background": True})
                check("Started background job" in text(job), "a background job starts")
                check(bool(processes_with(f"sleep {job_marker}")), "the job runs")
    # Leaving the client sends DELETE: the session's job is gone.
    gone = False
    for _ in range(100):
        if not processes_with(f"sleep {job_marker}"):
            gone = True
            break
        await anyio.sleep(0.1)
    check(gone, "closing the SDK client (DELETE) kills the session's background job")
    check(not WARNINGS.seen, f"the SDK client warned of nothing ({WARNINGS.seen})")


async def refusals(server: Server) -> None:
    for token, what in ((None, "no token"), ("wrong-token-0123456789abcdef", "a wrong token")):
        refused = False
        try:
            with anyio.fail_after(20):
                async with client(token) as http:
                    async with streamable_http_client(server.url, http_client=http) as (read, write):
                        async with ClientSession(read, write) as session:
                            await session.initialize()
        except Exception as err:  # the SDK raises on 401 (in an exception group)
            refused = "401" in repr(err) or "Unauthorized" in repr(err) or isinstance(err, BaseExceptionGroup)
        check(refused, f"the SDK client with {what} is refused")
    response = httpx2.get(server.url.removesuffix("/mcp") + "/healthz")
    check(response.status_code == 200 and response.text == "ok\n", "GET /healthz answers ok without a token")


if __name__ == "__main__":
    anyio.run(main)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("all checks passed")
