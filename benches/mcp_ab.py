#!/usr/bin/env python3
"""Two `agentcore` binaries side by side over stdio, alternating call by call.

Run by hand (no dependency beyond Python 3), to compare a change with the
binary before it on a noisy machine:

    python3 benches/mcp_ab.py cold-start OLD NEW WS [N]
        N starts of each (default 30), alternating: spawn `agentcore mcp
        --root WS`, write one `initialize` line, read one line; with the
        command sandbox as configured and with a policy that turns it off;
        and `NEW --version` until it exits.

    python3 benches/mcp_ab.py read OLD NEW WS [N]
        On one warm connection to each binary, N `tools/call` of `read` of
        WS/big.txt (the whole file, then `limit: 10`), alternating; the
        answer is read as a line and not parsed. WS/big.txt is written if
        missing: 1,000 lines of 80 bytes (80,000 bytes).

Each line gives the median and the fastest (or the 10th percentile) in ms.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
    b'"2025-06-18","capabilities":{},"clientInfo":{"name":"ab","version":"1"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def start(binary, root, extra):
    proc = subprocess.Popen(
        [binary, "mcp", "--root", root, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=1 << 20,
    )
    proc.stdin.write(INIT)
    proc.stdin.flush()
    answer = proc.stdout.readline()
    assert b'"result"' in answer, answer[:300]
    return proc


def cold_start(old, new, root, n):
    off = os.path.join(tempfile.mkdtemp(prefix="mcp-ab-"), "sandbox-off.toml")
    with open(off, "w") as f:
        f.write('[sandbox]\nmode = "off"\n')
    times = {}
    for _ in range(n):
        for name, binary in (("before", old), ("after", new)):
            for label, extra in (("sandbox on", []), ("sandbox off", ["--policy", off])):
                t = time.perf_counter()
                proc = start(binary, root, extra)
                dt = (time.perf_counter() - t) * 1000
                proc.stdin.close()
                proc.wait()
                times.setdefault(f"{name}, {label}", []).append(dt)
        t = time.perf_counter()
        subprocess.run([new, "--version"], stdout=subprocess.DEVNULL, check=True)
        times.setdefault("after, --version", []).append((time.perf_counter() - t) * 1000)
    for key, values in times.items():
        print(f"{key:22} median {statistics.median(values):6.1f} ms  fastest {min(values):6.1f} ms")


def read(old, new, root, n):
    big = os.path.join(root, "big.txt")
    if not os.path.exists(big):
        with open(big, "w") as f:
            for i in range(1000):
                line = f"line {i:05}: the quick brown fox jumps over the lazy dog, again and again"
                f.write(f"{line:<79}\n")
    procs = []
    for binary in (old, new):
        proc = start(binary, root, [])
        proc.stdin.write(INITIALIZED)
        proc.stdin.flush()
        procs.append(proc)
    for limit in (None, 10):
        args = {"file_path": big}
        if limit:
            args["limit"] = limit
        times = [[], []]
        size = 0
        for i in range(1, n + 1):
            request = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": "read", "arguments": args}}
            line = json.dumps(request).encode() + b"\n"
            for k, proc in enumerate(procs):
                t = time.perf_counter()
                proc.stdin.write(line)
                proc.stdin.flush()
                answer = proc.stdout.readline()
                times[k].append((time.perf_counter() - t) * 1000)
                assert b'"isError":false' in answer, answer[:300]
                size = len(answer)
        for name, values in zip(("before", "after"), times):
            p10 = sorted(values)[len(values) // 10]
            print(f"read limit={limit} {name:6} median {statistics.median(values):.3f} ms"
                  f"  p10 {p10:.3f} ms  ({size}-byte answer)")
    for proc in procs:
        proc.stdin.close()
        proc.wait()


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("cold-start", "read"):
        sys.exit(__doc__)
    mode, old, new, root = sys.argv[1:5]
    n = int(sys.argv[5]) if len(sys.argv) > 5 else (30 if mode == "cold-start" else 2000)
    (cold_start if mode == "cold-start" else read)(old, new, os.path.abspath(root), n)


if __name__ == "__main__":
    main()
