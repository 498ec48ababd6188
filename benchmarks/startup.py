"""Start-up benchmark: ``verigrad certify`` of the softmax example, as a whole process and
through the Python API in a warm process.

Rows (issue 13), each a median over ROUNDS rounds, with a reference measured in the same
rounds (the executors alternate round by round, so a busy moment of the machine weighs
on all alike):

- ``verigrad certify examples/certify/softmax.py:softmax --shape x=n,d``, the whole
  process (interpreter start, imports, tracing, the adversarial validation, the
  proofs, the report, the interpreter's exit): goal at most 1.2 s. Reference: a process
  that only imports JAX (``python -c "import jax"``), which the command cannot avoid.
- ``verigrad.certify(softmax, shapes={"x": "n, d"})`` in a warm process: JAX imported
  and warmed up by certifying another example (layer norm) first, then softmax
  certified for the first time in that process (its tracing, validation and proofs
  all run; nothing of softmax is cached): goal at most 0.3 s. Each round is a fresh
  process. Reference: the same process certifying softmax again (JAX's and XLA's
  caches warm for it).

Validation, proofs and the report are all on, as the command runs by default.

    .venv/bin/python benchmarks/startup.py [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CERTIFY = [PY, "-m", "verigrad.cli", "certify", "examples/certify/softmax.py:softmax", "--shape", "x=n,d"]
IMPORT_JAX = [PY, "-c", "import jax"]
PROCESS_GOAL = 1.2
WARM_GOAL = 0.3

# one round of the warm-process row: a fresh process warmed by another example, then softmax
WARM = r"""
import json, sys, time
sys.path.insert(0, "examples/certify")
import verigrad
import layer_norm, softmax
verigrad.certify(layer_norm.layer_norm, shapes={"x": "n, d", "gamma": "d", "beta": "d"})
t0, c0 = time.perf_counter(), time.process_time()
first = verigrad.certify(softmax.softmax, shapes={"x": "n, d"})
t1, c1 = time.perf_counter(), time.process_time()
again = verigrad.certify(softmax.softmax, shapes={"x": "n, d"})
t2 = time.perf_counter()
assert first.status == again.status == "PROVED", (first.status, again.status)
print(json.dumps({"first": t1 - t0, "again": t2 - t1, "first_cpu": c1 - c0, "timings": first.timings}))
"""


def _env():
    env = dict(os.environ)
    env.pop("VERIGRAD_WITNESS", None)     # as a user runs it (the test suite's witness check is not in the command)
    return env


def wall(cmd, check_last=None, cpu=None) -> float:
    """Wall seconds of the process ``cmd``; its CPU seconds (user + system) appended to
    ``cpu`` (on a shared machine the wall time also counts waiting for a core)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    if out.returncode != 0 or (check_last and out.stdout.strip().splitlines()[-1] != check_last):
        raise SystemExit(f"{' '.join(cmd)} failed (exit {out.returncode}):\n{out.stdout}\n{out.stderr}")
    return t


def warm_round() -> dict:
    out = subprocess.run([PY, "-c", WARM], cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if out.returncode != 0:
        raise SystemExit(f"the warm-process round failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--json", action="store_true", help="one JSON line instead of the table")
    args = ap.parse_args(argv)
    wall(CERTIFY, "PROVED")               # warm the file cache and the bytecode
    proc, ref, first, again, cpu, cpu_ref, first_cpu = [], [], [], [], [], [], []
    for r in range(args.rounds):
        pair = [(proc, CERTIFY, "PROVED", cpu), (ref, IMPORT_JAX, None, cpu_ref)]
        for acc, cmd, last, c in (pair if r % 2 == 0 else pair[::-1]):
            acc.append(wall(cmd, last, c))
        w = warm_round()
        first.append(w["first"])
        first_cpu.append(w["first_cpu"])
        again.append(w["again"])
    med = {k: statistics.median(v) for k, v in
           (("process", proc), ("import jax", ref), ("warm first", first), ("warm again", again),
            ("process cpu", cpu), ("import jax cpu", cpu_ref), ("warm first cpu", first_cpu))}
    rows = [
        ("verigrad certify softmax, whole process", med["process"], PROCESS_GOAL,
         'python -c "import jax"', med["import jax"]),
        ("verigrad.certify(softmax), warm process", med["warm first"], WARM_GOAL,
         "the same call again", med["warm again"]),
    ]
    if args.json:
        print(json.dumps({"rounds": args.rounds, "medians_s": med}))
    else:
        from rich.console import Console
        from rich.table import Table
        table = Table(title=f"start-up: median of {args.rounds} rounds (executors alternating)")
        for col in ("what", "median s", "goal s", "reference", "reference s", "ratio"):
            table.add_column(col, justify="left" if col in ("what", "reference") else "right")
        for what, t, goal, rname, rt in rows:
            style = "green" if t <= goal else "red"
            table.add_row(what, f"[{style}]{t:.3f}", f"<= {goal:.1f}", rname, f"{rt:.3f}", f"{t / rt:.2f}")
        console = Console(width=max(Console().width, 110))
        console.print(table)
        console.print(f"CPU seconds (user + system), medians: the command {med['process cpu']:.3f}, "
                      f"import jax {med['import jax cpu']:.3f} (ratio {med['process cpu'] / med['import jax cpu']:.2f}); "
                      f"the warm call {med['warm first cpu']:.3f} (the process's, all threads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
