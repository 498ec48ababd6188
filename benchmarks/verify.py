"""Benchmark: ``verigrad verify`` over the whole theorem library, cold and warm.

Cold: an empty cache, every theorem checked by worker processes (``--jobs 2``); warm:
every result read back from the cache. Each is a fresh ``verigrad verify`` process, so
the times include Python start-up, imports and hashing (what a user waits for).
Medians of RUNS runs. Goals on a 2-core machine: cold at least 50 theorems/s, warm at
most 2 s in total. "CPU s" is the CPU time of the command and its workers: on an
otherwise idle machine the cold run takes about that divided by the jobs, plus the
serial start-up; a loaded machine stretches the wall time, not the CPU time. A second
table shows the slowest theorems checked in one process (CPU seconds).
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from rich.console import Console
from rich.table import Table

RUNS = 3
JOBS = 2


def run_verify(cache: str) -> tuple[float, float, list]:
    """Wall seconds, CPU seconds of the command and its workers, records."""
    env = {**os.environ, "VERIGRAD_CACHE": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "verigrad.cli", "verify", "--json", "--jobs", str(JOBS)],
                         capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode not in (0, 1):
        raise SystemExit(f"verigrad verify failed: {out.stderr}")
    return wall, cpu, json.loads(out.stdout)


def main():
    console = Console()
    cold, warm, cold_cpu, warm_cpu, records = [], [], [], [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as cache:
            t, cpu, records = run_verify(cache)
            cold.append(t)
            cold_cpu.append(cpu)
            t2, cpu2, again = run_verify(cache)
            warm.append(t2)
            warm_cpu.append(cpu2)
            assert all(r["cached"] for r in again)
    n = len(records)
    statuses = {s: sum(r["status"] == s for r in records) for s in ("proved", "plausible", "failed")}
    c, w = statistics.median(cold), statistics.median(warm)
    table = Table(title=f"verigrad verify: {n} theorems, --jobs {JOBS} (median of {RUNS})")
    for col in ("run", "seconds", "CPU s", "theorems/s", "goal", "met"):
        table.add_column(col, justify="right" if col != "run" else "left")
    table.add_row("cold (empty cache)", f"{c:.2f}", f"{statistics.median(cold_cpu):.2f}", f"{n / c:.1f}",
                  ">= 50 theorems/s", "yes" if n / c >= 50 else "no")
    table.add_row("warm (all cached)", f"{w:.2f}", f"{statistics.median(warm_cpu):.2f}", f"{n / w:.1f}", "<= 2 s",
                  "yes" if w <= 2 else "no")
    console.print(table)
    console.print(f"{statuses['proved']} proved, {statuses['plausible']} plausible, {statuses['failed']} failed; "
                  f"load average at the end: {os.getloadavg()[0]:.1f} (other work on the machine slows the cold run)")

    from verigrad.proof import load_library
    from verigrad.proof.script import forget, run_proof
    forget()
    rows = []
    total = time.process_time()
    for info in load_library():
        t0 = time.process_time()
        run_proof(info.module)
        rows.append((time.process_time() - t0, info.name))
    total = time.process_time() - total
    slow = Table(title=f"one process, CPU seconds: {total:.2f} in all, {total / len(rows) * 1000:.1f} ms per theorem")
    slow.add_column("theorem")
    slow.add_column("CPU s", justify="right")
    for t, name in sorted(rows, reverse=True)[:10]:
        slow.add_row(name, f"{t:.3f}")
    console.print(slow)


if __name__ == "__main__":
    main()
