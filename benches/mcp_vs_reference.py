#!/usr/bin/env python3
"""`agentcore mcp` beside the reference MCP filesystem server, on one workspace.

Run by hand (not by cargo): installs `@modelcontextprotocol/server-filesystem`
with npm into a temporary folder, generates a workspace, starts both servers
on it and times the operations they share, interleaved call by call so both
see the same machine:

- read a file: agentcore `read` / reference `read_text_file` (or `read_file`
  on versions without it) of an 80,000-byte file of 1,000 lines;
- list a directory: agentcore `ls` / reference `list_directory` of a folder
  of 200 files;
- find files by pattern: agentcore `glob` / reference `search_files` of
  `**/*_042.txt` under a tree of 5,000 files (50 folders of 100): 50 matches;
- ping: the protocol floor of each server (no tool);
- cold start: from spawning the server to its `initialize` answer, a fresh
  process each time.

The client is written here: plain JSON-RPC 2.0 over the child's stdin and
stdout, one JSON object a line, blocking reads (Python's standard library
only: subprocess and json; no MCP SDK), so both servers pay the same small
client cost. Every result is checked (no `isError`, the expected text in
it) before anything is timed.

Reports medians (and p10, p90) in milliseconds, the ratio reference /
agentcore (above 1 means agentcore is faster), and the size of each result.

    cargo build --release --bin agentcore
    python3 benches/mcp_vs_reference.py --binary target/release/agentcore
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGE = "@modelcontextprotocol/server-filesystem"
PROTOCOL_VERSION = "2025-06-18"


class Server:
    """One MCP server over stdio, spoken to with plain JSON-RPC lines."""

    def __init__(self, name: str, argv: list[str], cwd: Path):
        self.name = name
        self.argv = argv
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.next_id = 0

    def start(self) -> float:
        """Spawns the server and completes the handshake; returns the seconds
        from the spawn to the `initialize` answer."""
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            # Buffered: an unbuffered pipe's readline reads a byte at a time.
            bufsize=-1,
        )
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp_vs_reference", "version": "0"},
            },
        )
        elapsed = time.perf_counter() - started
        if "serverInfo" not in result:
            sys.exit(f"{self.name}: unexpected initialize result: {result}")
        self.notify("notifications/initialized", {})
        return elapsed

    def stop(self) -> None:
        if self.proc is None:
            return
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def send(self, message: dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict | None = None) -> dict:
        """Sends a request and returns its `result`; notifications that come
        first are skipped, requests from the server refused."""
        assert self.proc is not None and self.proc.stdout is not None
        self.next_id += 1
        request_id = self.next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"{self.name}: the server closed its stdout during {method}")
            reply = json.loads(line)
            if "method" in reply:
                if "id" in reply:
                    # A request from the server (e.g. roots/list): not offered.
                    self.send(
                        {
                            "jsonrpc": "2.0",
                            "id": reply["id"],
                            "error": {"code": -32601, "message": "not supported"},
                        }
                    )
                continue
            if reply.get("id") != request_id:
                continue
            if "error" in reply:
                sys.exit(f"{self.name}: {method} failed: {reply['error']}")
            return reply["result"]

    def call(self, tool: str, arguments: dict) -> str:
        """Calls a tool; returns its text, or stops the run if it failed."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        text = "\n".join(
            block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"
        )
        if result.get("isError"):
            sys.exit(f"{self.name}: {tool} {arguments} failed: {text[:500]}")
        return text


def write_workspace(root: Path) -> None:
    lines = []
    for i in range(1000):
        line = f"line {i:05}: the quick brown fox jumps over the lazy dog, again and again"
        lines.append(f"{line:<79}\n")
    text = "".join(lines)
    assert len(text) == 80_000
    (root / "big.txt").write_text(text)
    listing = root / "listing"
    listing.mkdir()
    for i in range(200):
        (listing / f"entry_{i:03}.txt").write_text(f"entry {i}\n")
    for d in range(50):
        folder = root / "tree" / f"d{d:02}"
        folder.mkdir(parents=True)
        for f in range(100):
            n = d * 100 + f
            (folder / f"f_{f:03}.txt").write_text(
                f"file {n}\nsome ordinary text that does not match\nneedle_{n}\nmore text at the end\n"
            )


def install_reference(folder: Path, version: str) -> tuple[list[str], str]:
    """npm-installs the reference server into `folder`: (argv prefix, version)."""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        sys.exit("node and npm are needed to install the reference server")
    subprocess.run(
        [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), f"{PACKAGE}@{version}"],
        check=True,
    )
    package = folder / "node_modules" / PACKAGE
    manifest = json.loads((package / "package.json").read_text())
    bin_field = manifest.get("bin")
    if isinstance(bin_field, dict):
        entry = next(iter(bin_field.values()))
    elif isinstance(bin_field, str):
        entry = bin_field
    else:
        entry = "dist/index.js"
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    return [node, str(package / entry)], f"{manifest['version']} (node {node_version})"


def quantiles(samples: list[float]) -> tuple[float, float, float]:
    ms = sorted(s * 1000.0 for s in samples)
    at = lambda q: ms[int((len(ms) - 1) * q)]  # noqa: E731
    return at(0.1), statistics.median(ms), at(0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the agentcore binary (a release build)")
    parser.add_argument("--calls", type=int, default=300, help="timed calls per operation and server")
    parser.add_argument("--warmup", type=int, default=30, help="untimed calls per operation first")
    parser.add_argument("--starts", type=int, default=20, help="cold starts per server")
    parser.add_argument("--reference-version", default="latest", help="npm version of the reference server")
    options = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="mcp-vs-reference-"))
    try:
        run(options, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(options: argparse.Namespace, scratch: Path) -> None:
    reference_argv, reference_version = install_reference(scratch / "npm", options.reference_version)
    root = (scratch / "workspace").resolve()
    root.mkdir()
    write_workspace(root)
    binary = str(Path(options.binary).resolve())
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()

    agentcore = Server("agentcore", [binary, "mcp", "--root", str(root)], root)
    reference = Server("reference", reference_argv + [str(root)], root)
    servers = [agentcore, reference]
    for server in servers:
        server.start()
    tools = {s.name: {t["name"] for t in s.request("tools/list", {})["tools"]} for s in servers}
    read_tool = "read_text_file" if "read_text_file" in tools["reference"] else "read_file"

    big, listing, tree = root / "big.txt", root / "listing", root / "tree"
    # name -> {server: (tool, arguments)}, and a text every result must contain.
    operations = {
        "read an 80 KB file": (
            {
                "agentcore": ("read", {"file_path": str(big)}),
                "reference": (read_tool, {"path": str(big)}),
            },
            "line 00999",
        ),
        "list a folder of 200 files": (
            {
                "agentcore": ("ls", {"path": str(listing)}),
                "reference": ("list_directory", {"path": str(listing)}),
            },
            "entry_199.txt",
        ),
        "find **/*_042.txt in 5,000 files": (
            {
                "agentcore": ("glob", {"pattern": "**/*_042.txt", "path": str(tree)}),
                "reference": ("search_files", {"path": str(tree), "pattern": "**/*_042.txt"}),
            },
            "f_042.txt",
        ),
    }

    samples: dict[str, dict[str, list[float]]] = {}
    sizes: dict[str, dict[str, int]] = {}
    matches: dict[str, dict[str, int]] = {}
    for name, (per_server, expected) in operations.items():
        samples[name] = {s.name: [] for s in servers}
        sizes[name] = {}
        matches[name] = {}
        for server in servers:
            tool, arguments = per_server[server.name]
            text = server.call(tool, arguments)
            if expected not in text:
                sys.exit(f"{server.name}: {tool} did not return {expected!r}: {text[:500]}")
            sizes[name][server.name] = len(text.encode())
            matches[name][server.name] = text.count(expected) if "find" in name else 0
            for _ in range(options.warmup):
                server.call(tool, arguments)
        for _ in range(options.calls):
            for server in servers:
                tool, arguments = per_server[server.name]
                started = time.perf_counter()
                server.call(tool, arguments)
                samples[name][server.name].append(time.perf_counter() - started)
    samples["ping"] = {s.name: [] for s in servers}
    for _ in range(options.calls):
        for server in servers:
            started = time.perf_counter()
            server.request("ping")
            samples["ping"][server.name].append(time.perf_counter() - started)
    for server in servers:
        server.stop()

    samples["cold start → initialize answer"] = {s.name: [] for s in servers}
    for server in servers:  # one throwaway start each, for the page cache
        server.start()
        server.stop()
    for _ in range(options.starts):
        for server in servers:
            samples["cold start → initialize answer"][server.name].append(server.start())
            server.stop()

    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"agentcore: {version}; reference: {PACKAGE} {reference_version}")
    print(f"client: plain JSON-RPC over pipes (Python {sys.version.split()[0]}, standard library only)")
    print(f"{options.calls} calls per operation ({options.starts} cold starts), interleaved; load average {' '.join(load)}")
    print()
    print("| operation | agentcore median (p10–p90) | reference median (p10–p90) | reference / agentcore | result bytes (agentcore / reference) |")
    print("|---|---|---|---|---|")
    for name, per_server in samples.items():
        a = quantiles(per_server["agentcore"])
        r = quantiles(per_server["reference"])
        size = sizes.get(name)
        size_text = f"{size['agentcore']:,} / {size['reference']:,}" if size else "—"
        print(
            f"| {name} | {a[1]:.3f} ms ({a[0]:.3f}–{a[2]:.3f}) | {r[1]:.3f} ms ({r[0]:.3f}–{r[2]:.3f}) "
            f"| {r[1] / a[1]:.2f}× | {size_text} |"
        )
    for name, per_server in matches.items():
        if any(per_server.values()):
            print(f"\n{name}: matches listed: agentcore {per_server['agentcore']}, reference {per_server['reference']}")


if __name__ == "__main__":
    if os.name != "posix":
        sys.exit("POSIX only")
    main()
