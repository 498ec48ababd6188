"""``verigrad verify``: check the theorem library (every theorem, or those matching).

::

    verigrad verify                       # every theorem, in parallel, cached
    verigrad verify softmax 'matrix.*'    # by area, name, glob or file
    verigrad verify --json                # one JSON record per theorem, for scripts
    verigrad verify --axioms softmax.sums_to_one   # the axioms a theorem rests on
    verigrad verify --steps attention.relative_position   # the proof, step by step

Exit code 0 only if every selected theorem is proved; 1 otherwise; 3 for bad input.

The top of ``verigrad.proof``: it reads the library (``library``) and prints.
"""
from __future__ import annotations

import json
import os
import sys
import time

from verigrad.kernel import AXIOMS

from .library import file_info, load_library, select, verify_library

NAME = "verify"
HELP = "check the theorem library: every step of every proof re-checked by the kernel"


def add_arguments(p):
    from verigrad.options import at_least, positive
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="theorems (area.name), areas, names within an area, globs ('vjp.*softmax*') or "
                        "files, matched as whole names, not substrings; all theorems if none")
    p.add_argument("--jobs", "-j", type=at_least(1), default=None, metavar="N",
                   help="worker processes (default: one per CPU)")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.add_argument("--timeout", type=positive(), default=None, metavar="SECONDS",
                   help="stop a theorem file that takes longer and report it failed (default: no limit)")
    p.add_argument("--no-cache", action="store_true", help="check everything again (results are still stored)")
    p.add_argument("--axioms", metavar="NAME", help="list the axioms theorem NAME rests on")
    p.add_argument("--steps", action="store_true", help="print each selected proof step by step")
    p.add_argument("--proofs", metavar="DIR", help="write each proved theorem's proof trace to DIR "
                   "(replay with `verigrad check DIR/*.json`)")


class _BadInput(Exception):
    pass


def _usage(msg):
    return _BadInput(msg)


def run(args) -> int:
    try:
        return _run(args)
    except _BadInput as e:        # one line, exit code 3 (as verigrad.cli.UsageError)
        print(f"verigrad verify: error: {e}", file=sys.stderr)
        return 3


def _run(args) -> int:
    from rich.console import Console

    infos = load_library()
    if args.axioms:
        return _axioms(args, infos)
    chosen = []
    for p in args.patterns:
        found = select(infos, [p])
        if not found and p.endswith(".py") and os.path.isfile(p):
            found = [file_info(p)]           # a theorem file outside the library
        if not found:
            raise _usage(f"no theorem matches {p!r} (areas: {', '.join(sorted({i.area for i in infos}))})")
        chosen += [i for i in found if i not in chosen]
    if not args.patterns:
        chosen = infos
    if args.proofs:
        from verigrad.errors import UsageError
        from verigrad.options import output_folder
        try:
            output_folder(args.proofs, "--proofs")          # before any work
        except UsageError as e:
            raise _usage(str(e)) from None
    err = Console(stderr=True)
    out = Console()
    t0 = time.perf_counter()
    records = _check(args, chosen, err)
    wall = time.perf_counter() - t0
    if args.proofs:
        _write_proofs(args.proofs, records)
    if args.json:
        print(json.dumps([_json(r) for r in records], indent=1))
    else:
        if args.steps:
            for r in records:
                _print_steps(out, r)
        _summary(out, records, wall)
    return 0 if all(r.status == "proved" for r in records) else 1


def _check(args, chosen, err):
    """Records of the chosen theorems, with progress on stderr: a bar on a terminal,
    otherwise a line per theorem as it is done (nothing with --json)."""
    from verigrad.console import Progress
    with Progress("verify", len(chosen), quiet=args.json, err=err) as progress:
        return verify_library(infos=chosen, jobs=args.jobs, use_cache=not args.no_cache,
                              on_result=lambda rec: progress.done(rec.name, LABEL.get(rec.status, rec.status)),
                              print_steps=args.json or args.steps, timeout=args.timeout)


# How a status reads: "plausible" (the script ran, a goal was not reached) is NOT proved;
# it reads FALSE where the goal is refuted numerically (``falsify.false_label``, in the worker).
LABEL = {"proved": "proved", "plausible": "unproved", "failed": "failed", "false": "FALSE"}
_STYLE = {"proved": "green", "plausible": "red", "failed": "red", "false": "bold red"}


def _label(r) -> str:
    return "false" if getattr(r, "false", None) else r.status


def _summary(out, records, wall):
    from verigrad.console import cell, say, show_table
    rows, notes = [], []
    for r in records:
        note = r.reason if r.status != "proved" else ("; ".join(r.conditions) if r.conditions else "")
        if r.status == "proved" and r.area == "file":
            note = r.statement              # a file from outside the library: what the kernel proved, in full
        if r.status == "failed" and r.line:
            note = f"line {r.line}: {note}"
        if r.status == "plausible":
            note = f"NOT PROVED (the proof does not reach its goal): {note}"
        if getattr(r, "false", None):
            note = f"FALSE: numerically, the two sides differ: {r.false}"
        if len(note) > 120:
            note = note[:117] + "..."
        steps = sum(s.index is not None for s in r.steps)
        rows.append([r.name, cell(LABEL[_label(r)], _STYLE[_label(r)]), str(steps), str(len(r.axioms)),
                     "cached" if r.cached else f"{r.seconds:.3f}", note])
        if r.status != "proved":
            notes.append(f"{r.name}: {note}")
    dropped = show_table(out, ["theorem", "status", "steps", "axioms", "s", "note"], rows, title="verigrad verify",
                      right=("steps", "axioms", "s"), optional=("note",))
    if dropped and "note" in dropped:
        for line in notes:
            say(out, line, "red")
    counts = {k: sum(_label(r) == k for r in records) for k in ("proved", "plausible", "failed", "false")}
    cached = sum(r.cached for r in records)
    axioms = sorted({a for r in records for a in r.axioms})
    false = f", {counts['false']} FALSE" if counts["false"] else ""
    say(out, f"{counts['proved']} proved, {counts['plausible']} unproved{false}, {counts['failed']} failed "
             f"({len(records)} theorem{'s' if len(records) != 1 else ''}, {cached} from the cache) in {wall:.2f} s")
    if axioms:
        say(out, f"axioms used: {', '.join(axioms)}")


def _print_steps(out, r):
    """The proof step by step. A step whose statement reads as the one before it says
    so instead of printing it again (and shows the kernel's statement when that differs)."""
    from verigrad.console import say
    say(out, f"{r.name}  {LABEL[_label(r)]}  {r.file}", "bold")
    if r.doc:
        say(out, f"  {' '.join(r.doc.split(chr(10) + chr(10))[0].split())}")
    previous = None
    written = lambda s: s.display or s.statement  # noqa: E731 - a cached step has only the kernel's statement
    for s in r.steps:
        mark = "proved " if s.status == "proved" else "pending"
        where = f"line {s.line}" if s.line else ""
        uses = f" from {', '.join(s.uses)}" if s.uses else ""
        if previous is not None and written(s) == written(previous):
            if s.statement and s.statement != previous.statement:
                shown = f"(reads as {previous.label}; the kernel's statement) {s.statement}"
            else:
                shown = f"(the statement of {previous.label}, unchanged)"
        else:
            shown = written(s)
        say(out, f"  {s.label:>16}  {mark}  {shown}")
        say(out, f"  {'':>16}  {s.rule + uses}, {where}", "dim")
        previous = s
    if r.status != "proved":
        say(out, f"  {LABEL[r.status].upper()}: {r.reason}", _STYLE[r.status])
    if getattr(r, "false", None):
        say(out, f"  FALSE: numerically, the two sides differ: {r.false}", _STYLE["false"])
    out.print()


def _write_proofs(directory, records):
    from pathlib import Path
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for r in records:
            if r.status == "proved" and r.trace is not None:
                (out / f"{r.name}.trace.json").write_text(json.dumps(r.trace, separators=(",", ":")))
    except OSError as e:
        raise _usage(f"cannot write proof traces to {directory}: {e.strerror or e}") from None


def _json(r):
    d = r.to_json()
    d["cached"] = r.cached
    if getattr(r, "false", None):
        d["false"] = r.false            # the goal's two sides differ numerically (where, and the values)
    return d


def _axioms(args, infos) -> int:
    from rich.console import Console

    exact = [i for i in infos if i.name == args.axioms or i.module == args.axioms]
    found = exact or select(infos, [args.axioms])
    if not found:
        raise _usage(f"no theorem {args.axioms!r}")
    if len(found) > 1:
        raise _usage(f"{args.axioms!r} matches {len(found)} theorems: "
                     f"{', '.join(i.name for i in found[:8])}{' ...' if len(found) > 8 else ''}")
    (rec,) = verify_library(infos=found, jobs=1, use_cache=not args.no_cache)
    if args.json:
        print(json.dumps({"theorem": rec.name, "status": rec.status, "axioms": rec.axioms,
                          "conditions": rec.conditions}, indent=1))
        return 0 if rec.status == "proved" else 1
    out = Console()
    if rec.status != "proved":
        out.print(f"{rec.name} is {rec.status}: {rec.reason}", highlight=False, markup=False)
        return 1
    out.print(f"{rec.name} rests on {len(rec.axioms)} axioms:", highlight=False, markup=False)
    for a in rec.axioms:
        ax = AXIOMS.get(a)
        out.print(f"  {a:<26} {ax.statement if ax else ''}", highlight=False, markup=False)
    for c in rec.conditions:
        out.print(f"  under the condition {c}", highlight=False, markup=False)
    return 0

