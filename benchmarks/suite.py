"""The default test run, timed: ``make test`` (``python -m pytest -q -n 2``, the
witness check on), wall seconds of the whole process.

Goal (issue 13, 2-core machine): at most 5 minutes. Reference, in the same run: the
collection alone (``pytest --collect-only -q``), what every run pays before its first
test. One run by default (the suite takes minutes); ``--runs N`` for a median.

    .venv/bin/python benchmarks/suite.py [--runs N] [-- PYTEST ARGS]
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 300.0
DEFAULT = ["-q", "-n", "2"]


def wall(args) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    t = time.perf_counter() - t0
    lines = [ln for ln in out.stdout.strip().splitlines() if ln.strip()]
    summary = next((ln.strip("= ") for ln in reversed(lines) if re.search(r"\d+ (passed|failed|error)", ln)),
                   lines[-1] if lines else f"exit {out.returncode}")
    return t, summary


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    pytest_args = DEFAULT + extra
    runs, collect, summaries = [], [], []
    for _ in range(args.runs):
        t, _ = wall(["--collect-only", "-q", *extra])
        collect.append(t)
        t, summary = wall(pytest_args)
        runs.append(t)
        summaries.append(summary)
    from rich.console import Console
    from rich.table import Table
    med, ref = statistics.median(runs), statistics.median(collect)
    table = Table(title=f"the default test run: median of {args.runs}")
    for col in ("what", "median s", "goal s", "result"):
        table.add_column(col, justify="left" if col in ("what", "result") else "right")
    style = "green" if med <= GOAL else "red"
    table.add_row(f"pytest {' '.join(pytest_args)}" + ("" if extra else " (make test)"), f"[{style}]{med:.0f}", f"<= {GOAL:.0f}", summaries[-1])
    table.add_row("reference: collection alone", f"{ref:.1f}", "", "")
    Console(width=max(Console().width, 110)).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
