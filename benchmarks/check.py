"""Benchmark: replaying a proof trace against proving it (issue 10's goal: replaying takes
at most 30 % of the time proving took, per trace).

For every theorem of the library, every ``examples/certify`` function and a selection of
zoo layers, the claim is proved in a fresh child process (forked from a parent that has
imported verigrad but proved nothing, so the kernel's caches start cold) and its trace
written; then the trace is replayed as ``verigrad check`` replays it: in a fresh Python
process that loads only the kernel and the trace decoder (a child forked from the parent would carry all of
verigrad and JAX, whose pages it copies as it touches them). Proving is what a user waits for (the proof script and its tactics; tracing,
import, translation validation and the kernel for certify); replaying is the kernel's
rules alone, with the untrusted search's choices read back from the trace. Both are
medians of RUNS runs, the two alternating; the table shows the ratio replay / prove per trace, the median
ratio and the largest, twice: in CPU seconds of the thread that did the work (what the goal
is judged on: on a shared machine a wall-clock figure of a few milliseconds measures the
load as much as the work; other threads' CPU time is not counted, so proving is not
flattered by XLA's compile threads) and in wall-clock seconds.

    .venv/bin/python benchmarks/check.py [library|certify|layers ...]
"""
from __future__ import annotations

import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.table import Table

RUNS = 5
GOAL = 0.30
LAYERS = ("dense", "softmax", "layer_norm", "conv2d_s1_same", "mhsa", "max_pool", "gelu_tanh")
ROOT = Path(__file__).resolve().parents[1]
CTX = multiprocessing.get_context("fork")


def _child(fn, args, q):
    try:
        q.put(("ok", fn(*args)))
    except BaseException as e:  # noqa: BLE001 - reported by the parent
        q.put(("error", f"{type(e).__name__}: {e}"))


def forked(fn, *args):
    """``fn(*args)`` in a fresh child process; its return value."""
    q = CTX.Queue()
    p = CTX.Process(target=_child, args=(fn, args, q))
    p.start()
    status, value = q.get()
    p.join()
    if status != "ok":
        raise RuntimeError(value)
    return value


@contextmanager
def clocked():
    """Yields a list that holds, once the block is done, its (CPU, wall) seconds. The CPU
    time is the calling thread's only: work that other threads do for it (XLA compiles on
    its own threads) is left out, so the figure for proving errs low, never high."""
    out = []
    c0, w0 = time.thread_time(), time.perf_counter()
    try:
        yield out
    finally:
        out += [time.thread_time() - c0, time.perf_counter() - w0]


# -- proving (in a child) --------------------------------------------------------------------

def prove_theorem(name, out):
    from verigrad.proof.library import _traced, verify_theorem
    from verigrad.trace import write_trace
    with clocked() as seconds:
        rec = _traced(verify_theorem(name))
    if rec.status != "proved":
        raise RuntimeError(f"{name} is {rec.status}")
    Path(out).write_text(json.dumps(rec.trace))
    return seconds


def prove_example(path, out):
    import importlib.util

    import verigrad
    from verigrad.certify.command import write_proof
    spec = importlib.util.spec_from_file_location("bench_certify", ROOT / "benchmarks" / "certify.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    fn, shapes, options = bench.load(Path(path))     # with the documented command line's options (--assume ...)
    with clocked() as seconds:
        cert = verigrad.certify(fn, shapes=shapes, **options)
    if cert.status != "PROVED":
        raise RuntimeError(f"{path} is {cert.status}")
    write_proof(out, cert)
    return seconds


def prove_layer(name, out):
    from verigrad.nn import report
    from verigrad.nn.command import write_proofs
    with clocked() as seconds:
        (rec,) = report.layer_records([name])
    (path,) = write_proofs(Path(out).parent / "layer", [rec], [])
    Path(path).replace(out)
    return seconds


# -- replaying (in a child that loads only the kernel and the decoder) ---------------------------

# As ``verigrad check`` boots: bare ``verigrad`` and ``verigrad.trace`` packages (their
# __init__, which loads the printer, the untrusted search and the writer, is not run),
# then the trace decoder only, which imports the kernel.
REPLAY = r"""
import json, os, sys, time, types
for name, path in (("verigrad", sys.argv[2]), ("verigrad.trace", os.path.join(sys.argv[2], "trace"))):
    pkg = types.ModuleType(name)
    pkg.__path__ = [path]
    sys.modules[name] = pkg
from verigrad.trace.replay import extra_modules, replay
c0, w0 = time.thread_time(), time.perf_counter()
with open(sys.argv[1]) as f:
    claims = replay(json.load(f))
seconds = [time.thread_time() - c0, time.perf_counter() - w0]
print(json.dumps({"seconds": seconds, "claims": len(claims), "leaked": extra_modules(sys.modules)}))
"""


def replay_trace(path):
    """(CPU, wall) seconds to read and replay the trace in a fresh process that loads only the kernel
    and the decoder (as ``verigrad check`` does), and any other modules it loaded."""
    import subprocess
    out = subprocess.run([sys.executable, "-I", "-c", REPLAY, path, str(ROOT / "verigrad")], capture_output=True,
                         text=True)
    if out.returncode:
        raise RuntimeError(f"{path}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if not got["claims"]:
        raise RuntimeError(f"{path}: no claims")
    return got["seconds"], got["leaked"]


def measure(kind, name, prove, arg, tmp):
    out = str(Path(tmp) / f"{kind}-{name}.json")
    proves, runs = [], []
    for _ in range(RUNS):   # alternating, so that a busier moment of the machine weighs on both alike
        proves.append(forked(prove, arg, out))
        runs.append(replay_trace(out))
    if leaked := sorted({m for _, ms in runs for m in ms}):
        raise RuntimeError(f"the replay loaded more than the kernel and the decoder: {leaked}")
    proving = [statistics.median(p[k] for p in proves) for k in (0, 1)]
    replaying = [statistics.median(s[k] for s, _ in runs) for k in (0, 1)]
    return kind, name, proving, replaying, Path(out).stat().st_size


def main(argv=None):
    parts = set(argv if argv is not None else sys.argv[1:]) or {"library", "certify", "layers"}
    # The parent imports verigrad (so children start with its modules loaded) but proves nothing.
    import verigrad  # noqa: F401
    import verigrad.trace.replay  # noqa: F401
    from verigrad.proof.library import load_library
    import verigrad.nn.report  # noqa: F401
    import verigrad.certify.api  # noqa: F401
    jobs = []
    if "library" in parts:
        jobs += [("library", i.name, prove_theorem, i.name) for i in load_library()]
    if "certify" in parts:
        jobs += [("certify", p.stem, prove_example, str(p)) for p in sorted((ROOT / "examples" / "certify").glob("*.py"))]
    if "layers" in parts:
        jobs += [("layer", n, prove_layer, n) for n in LAYERS]
    console = Console()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name, prove, arg in jobs:
            try:
                rows.append(measure(kind, name, prove, arg, tmp))
            except RuntimeError as e:
                console.print(f"[red]{kind} {name}: {e}")
    table = Table(title=f"replay / prove, per trace (medians of {RUNS}; goal <= {GOAL:.0%} in CPU time)")
    for col in ("kind", "trace", "prove CPU s", "replay CPU s", "ratio CPU", "ratio wall", "trace KB"):
        table.add_column(col, justify="left" if col in ("kind", "trace") else "right")
    for kind, name, p, r, size in sorted(rows, key=lambda x: -x[3][0] / x[2][0]):
        style = "green" if r[0] / p[0] <= GOAL else "red"
        table.add_row(kind, name, f"{p[0]:.3f}", f"{r[0]:.3f}", f"[{style}]{r[0] / p[0]:.2f}", f"{r[1] / p[1]:.2f}",
                      f"{size / 1024:.0f}")
    console.print(table)
    for k, what in ((0, "CPU"), (1, "wall-clock")):
        ratios = [r[k] / p[k] for _, _, p, r, _ in rows]
        if ratios:
            worst = max(ratios)
            verdict = ("[green]met" if worst <= GOAL else "[red]not met") if k == 0 else "(for reference)"
            console.print(f"{len(rows)} traces, {what} time: median ratio {statistics.median(ratios):.2f}, "
                          f"largest {worst:.2f} (goal <= {GOAL:.2f} per trace): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
