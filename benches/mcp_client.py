#!/usr/bin/env python3
"""MCP round-trip latency of `agentcore mcp`, from the official Python SDK.

Starts `agentcore mcp --root DIR` as an MCP client would (stdio, via the
`mcp` package's `stdio_client` and `ClientSession`) and measures:

- cold start: from spawning the process to the `initialize` response, over
  a fresh process each time;
- round trip per call: N `tools/call` of `read` and of `grep` (and `ping` as
  the protocol floor) on one warm connection.

Each line gives mean, p50 and p95 in milliseconds. Every call must succeed
(`isError` false), or the run stops: a timing of an error is no timing.

    python3 -m venv .venv && .venv/bin/pip install mcp
    cargo build --release
    .venv/bin/python benches/mcp_client.py --binary target/release/agentcore \\
        --root . --calls 200 --starts 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client


def summary(name: str, samples_s: list[float]) -> str:
    ms = sorted(s * 1000.0 for s in samples_s)
    p50 = statistics.median(ms)
    # Nearest-rank 95th percentile.
    p95 = ms[min(len(ms) - 1, max(0, -(-95 * len(ms) // 100) - 1))]
    return (
        f"{name:<22} n={len(ms):<5} mean={statistics.fmean(ms):8.3f} ms"
        f"  p50={p50:8.3f} ms  p95={p95:8.3f} ms"
    )


def server(binary: str, root: str) -> StdioServerParameters:
    return StdioServerParameters(command=binary, args=["mcp", "--root", root])


async def cold_start(binary: str, root: str) -> float:
    """Seconds from spawning the server to its `initialize` response."""
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(server(binary, root), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                result = await session.initialize()
                elapsed = time.perf_counter() - started
                assert result.server_info.name == "agentcore", result.server_info
    return elapsed


async def timed_calls(session: ClientSession, tool: str, args: dict, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        result = await session.call_tool(tool, args)
        samples.append(time.perf_counter() - started)
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            sys.exit(f"{tool} failed: {text}")
    return samples


async def timed_pings(session: ClientSession, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await session.send_ping()
        samples.append(time.perf_counter() - started)
    return samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default="target/release/agentcore")
    parser.add_argument("--root", default=".", help="workspace root (default: .)")
    parser.add_argument("--calls", type=int, default=200, help="calls per tool")
    parser.add_argument("--starts", type=int, default=20, help="cold starts")
    parser.add_argument("--read", default="src/lib.rs", help="file to read")
    parser.add_argument("--grep", default="fn ", help="pattern to grep")
    parser.add_argument("--grep-path", default="src", help="where to grep")
    opts = parser.parse_args()
    binary = str(Path(opts.binary).resolve())
    root = str(Path(opts.root).resolve())

    # One throwaway start so the binary and its libraries are in the page cache.
    await cold_start(binary, root)
    starts = [await cold_start(binary, root) for _ in range(opts.starts)]
    print(summary("cold start→initialize", starts))

    read_args = {"file_path": opts.read}
    grep_args = {"pattern": opts.grep, "path": opts.grep_path, "output_mode": "content"}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(server(binary, root), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                # Warm up: first reads fill the page cache and the ledger.
                await timed_calls(session, "read", read_args, 10)
                await timed_calls(session, "grep", grep_args, 10)
                await timed_pings(session, 10)
                print(summary("ping", await timed_pings(session, opts.calls)))
                print(summary("tools/call read", await timed_calls(session, "read", read_args, opts.calls)))
                print(summary("tools/call grep", await timed_calls(session, "grep", grep_args, opts.calls)))


if __name__ == "__main__":
    anyio.run(main)
