"""Certify benchmark: seconds to certify each example custom_vjp (median of 3 runs), with
the adversarial translation validation and, in the same run, with the old validation at
two small size assignments; the ratio of the two medians per example, and the median
of those ratios.

Goals on a 2-core machine: each example at most 2 s, multi-head attention at most 5 s;
the adversarial validation at most 1.5x the old one's time (median ratio over the
examples). A run is the whole of ``verigrad.certify``: tracing and importing at symbolic
sizes, translation validation against JAX, and the kernel's proofs. The module is loaded
once; JAX's own caches stay warm between runs, as in a session. The two modes alternate
run by run, so that a slower machine moment weighs on both alike.

    .venv/bin/python benchmarks/certify.py [EXAMPLE ...]
"""
from __future__ import annotations

import importlib.util
import re
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import verigrad
from verigrad.certify.validate import validation_mode

RUNS = 3
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "certify"
GOALS = {"multi_head_attention": 5.0}
RATIO_GOAL = 1.5
COMMAND = re.compile(r"verigrad certify (\S+)((?: --shape \S*)+)")


def load(path: Path):
    m = COMMAND.search(path.read_text())
    name = m.group(1).split(":")[1]
    shapes = dict(s.split("=", 1) for s in m.group(2).split(" --shape ")[1:])
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), shapes, options(path)


def options(path: Path) -> dict:
    """The documented command line's other options (--assume, --stop-gradient, ...)."""
    import shlex
    from verigrad.certify.command import _group_parser, split_targets
    line = re.search(r"verigrad certify (\S+ .*)$", path.read_text(), re.M).group(1)
    (_, opts), = split_targets(shlex.split(line))
    ns = vars(_group_parser().parse_args(opts))
    keys = {"assume": "assume", "stop_gradient": "stop_gradient", "output": "output", "wrt": "wrt",
            "mask_value_as_inf": "mask_value_as_inf"}
    return {kw: ns[k] for k, kw in keys.items() if ns.get(k)}


def timed(fn, shapes, mode: str, opts=None):
    with validation_mode(mode):
        t0 = time.perf_counter()
        cert = verigrad.certify(fn, shapes=shapes, **(opts or {}))
        return time.perf_counter() - t0, cert


def median_run(runs):
    runs = sorted(runs, key=lambda r: r[0])
    return runs[len(runs) // 2]


def main(argv=None):
    only = set(argv or sys.argv[1:])
    console = Console(width=max(Console().width, 150))
    table = Table(title=f"verigrad certify: seconds per example (median of {RUNS}), "
                        "adversarial validation vs the old two assignments")
    for col in ("example", "status", "import", "validation", "proofs", "median s", "goal",
                "old: validation", "old: median s", "ratio"):
        table.add_column(col, justify="left" if col in ("example", "status") else "right")
    over, ratios = 0, []
    for path in sorted(EXAMPLES.glob("*.py")):
        if only and path.stem not in only:
            continue
        fn, shapes, opts = load(path)
        new, old = [], []
        for _ in range(RUNS):
            old.append(timed(fn, shapes, "two", opts))
            new.append(timed(fn, shapes, "adversarial", opts))
        t, cert = median_run(new)
        t_old, cert_old = median_run(old)
        ratio = t / t_old
        ratios.append(ratio)
        goal = GOALS.get(path.stem, 2.0)
        over += t > goal
        style = "green" if t <= goal else "red"
        table.add_row(path.stem, cert.status, *(f"{cert.timings[k]:.3f}" for k in ("import", "validation", "claims")),
                      f"[{style}]{t:.3f}", f"{goal:.1f}", f"{cert_old.timings['validation']:.3f}", f"{t_old:.3f}",
                      f"{ratio:.2f}")
    console.print(table)
    console.print(f"{over} example(s) over their goal" if over else "[green]every example within its goal")
    if ratios:
        med = statistics.median(ratios)
        style = "green" if med <= RATIO_GOAL else "red"
        console.print(f"[{style}]median ratio adversarial / old validation: {med:.2f} (goal <= {RATIO_GOAL})")


if __name__ == "__main__":
    main()
