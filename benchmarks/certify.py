"""Certify benchmark: seconds to certify each example custom_vjp (median of 3 runs).

Goals on a 2-core machine: each example at most 2 s, multi-head attention at most 5 s.
A run is the whole of ``verigrad.certify``: tracing and importing at symbolic sizes,
translation validation against JAX (two XLA compiles), and the kernel's proofs. The
module is loaded once; JAX's own caches stay warm between runs, as in a session.
"""
from __future__ import annotations

import importlib.util
import re
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import verigrad

RUNS = 3
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "certify"
GOALS = {"multi_head_attention": 5.0}
COMMAND = re.compile(r"verigrad certify (\S+)((?: --shape \S*)+)")


def load(path: Path):
    m = COMMAND.search(path.read_text())
    name = m.group(1).split(":")[1]
    shapes = dict(s.split("=", 1) for s in m.group(2).split(" --shape ")[1:])
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), shapes


def main(argv=None):
    only = set(argv or sys.argv[1:])
    console = Console()
    table = Table(title=f"verigrad certify: seconds per example (median of {RUNS})")
    for col in ("example", "status", "import", "validation", "proofs", "median s", "goal"):
        table.add_column(col, justify="left" if col in ("example", "status") else "right")
    over = 0
    for path in sorted(EXAMPLES.glob("*.py")):
        if only and path.stem not in only:
            continue
        fn, shapes = load(path)
        runs = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            cert = verigrad.certify(fn, shapes=shapes)
            runs.append((time.perf_counter() - t0, cert))
        runs.sort(key=lambda r: r[0])
        t, cert = runs[len(runs) // 2]
        goal = GOALS.get(path.stem, 2.0)
        over += t > goal
        style = "green" if t <= goal else "red"
        table.add_row(path.stem, cert.status, *(f"{cert.timings[k]:.2f}" for k in ("import", "validation", "claims")),
                      f"[{style}]{t:.2f}", f"{goal:.1f}")
    console.print(table)
    console.print(f"{over} example(s) over their goal" if over else "[green]every example within its goal")


if __name__ == "__main__":
    main()
