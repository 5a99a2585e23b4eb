#!/usr/bin/env python3
"""What joining a fresh cgroup v1 costs, the two ways a process can do it.

    sudo python3 benches/cgroup_join.py [--rounds 8] [--pause 50]

Each round makes a fresh cgroup under this process's own in the v1
`memory` hierarchy, waits `--pause` ms (so that no other move left the
kernel's cgroup thread-group lock a moment ago), then:

- `procs`: a forked child writes `0` ("this process") to its
  `cgroup.procs`, as agentcore's M did before issue 33's fifth pass;
- `tasks`: the calling thread writes `0` ("this thread") to its `tasks`,
  as M (a fresh fork with one thread) and the spawner threads do now.

Prints the time of each write and of the write back into the own cgroup.
Needs root (or a delegated v1 memory hierarchy) and cgroup v1.
"""

import argparse
import os
import statistics
import time


def own_memory_cgroup() -> str:
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return "/sys/fs/cgroup/memory" + path
    raise SystemExit("no cgroup v1 memory hierarchy for this process")


def write_zero(path: str) -> float:
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)
    return (time.perf_counter() - start) * 1000


def by_forked_child(own: str, fresh: str) -> tuple[float, float]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        there = write_zero(fresh + "/cgroup.procs")
        back = write_zero(own + "/cgroup.procs")
        os.write(write, f"{there} {back}".encode())
        os._exit(0)
    os.waitpid(pid, 0)
    there, back = os.read(read, 100).decode().split()
    os.close(read)
    os.close(write)
    return float(there), float(back)


def by_calling_thread(own: str, fresh: str) -> tuple[float, float]:
    return write_zero(fresh + "/tasks"), write_zero(own + "/tasks")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--pause", type=float, default=50, help="ms before each round")
    args = p.parse_args()
    own = own_memory_cgroup()
    print(f"kernel {os.uname().release}, {args.rounds} rounds, {args.pause:g} ms apart")
    for name, join in (("procs: a forked child, 0 to cgroup.procs", by_forked_child),
                       ("tasks: the calling thread, 0 to tasks", by_calling_thread)):
        there, back = [], []
        for i in range(args.rounds):
            fresh = f"{own}/cgroup-join-bench-{os.getpid()}-{i}"
            os.mkdir(fresh)
            try:
                time.sleep(args.pause / 1000)
                t, b = join(own, fresh)
                there.append(t)
                back.append(b)
            finally:
                os.rmdir(fresh)
        print(f"  {name}: into the fresh cgroup median {statistics.median(there):.2f} ms "
              f"(min {min(there):.2f}, max {max(there):.2f}); back median {statistics.median(back):.2f} ms")


if __name__ == "__main__":
    main()
