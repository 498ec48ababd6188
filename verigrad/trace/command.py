"""``verigrad check TRACE...``: replay proof traces in a fresh process that loads only
the kernel and the trace decoder (``verigrad.trace.replay``, untrusted: it hands every
step to the kernel's ``replay_step``), so a PROVED is trusted without trusting the
Python process that made it.

The fresh process decides: for each claim it reports PROVED (and the axioms) or the
trace REFUSED. It has matched each claim's step against the statement the trace
records, so this process then prints those recorded objects with the real printer
(untrusted, like every printer: it shows, it does not decide).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

NAME = "check"
HELP = "replay proof traces with the kernel alone, in a fresh process"

# The fresh process gets bare ``verigrad`` and ``verigrad.trace`` packages (their
# __init__, which loads the printer, the untrusted search and the trace writer, is not
# run) and imports the trace decoder only, which imports the kernel.
BOOT = """
import os, sys, types
for name, path in (("verigrad", sys.argv[1]), ("verigrad.trace", os.path.join(sys.argv[1], "trace"))):
    pkg = types.ModuleType(name)
    pkg.__path__ = [path]
    sys.modules[name] = pkg
from verigrad.trace.replay import main
sys.exit(main(sys.argv[2:]))
"""

# Isolated (no PYTHONPATH, no user site, not the working folder) and without ``site``: the
# ``.pth`` files of installed packages run code at start-up (red team RT3-B2); the kernel
# needs the standard library only.
FLAGS = ("-I", "-S")

TOO_DEEP = "(not printed: its terms are nested deeper than the printer can go)"


def add_arguments(p):
    p.add_argument("traces", nargs="+", metavar="TRACE", help="proof trace files (JSON) to replay")
    p.add_argument("--json", action="store_true", help="one JSON object per claim")


def check(paths) -> tuple[int, list]:
    """Replay ``paths`` in a fresh, isolated interpreter: its exit code and its verdicts
    (one dict per claim or refused trace)."""
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, *FLAGS, "-c", BOOT, root, *map(str, paths)], capture_output=True, text=True)
    verdicts = []
    for line in done.stdout.splitlines():
        try:
            verdicts.append(json.loads(line))
        except ValueError:
            verdicts.append({"status": "ERROR", "reason": line})
    if done.returncode not in (0, 1) and not any(v["status"] == "ERROR" for v in verdicts):
        verdicts.append({"status": "ERROR", "reason": (done.stderr.strip().splitlines() or ["the checker failed"])[-1]})
    return done.returncode, verdicts


def statement(path, step: int) -> dict:
    """The statement a trace records for ``step``, printed (the replay matched it)."""
    from verigrad.report.printing import claim_parts
    from verigrad.trace.replay import build, decode, load
    trace = load(path)
    objs = []
    for entry in trace["objects"]:
        objs.append(build(entry, objs))
    s = trace["steps"][step]
    lhs, rhs = decode(s["lhs"], objs), decode(s["rhs"], objs)
    hyps = [decode(h, objs) for h in s.get("hyps", [])]
    conds = [(c[0], decode(c[1], objs)) for c in s.get("conds", [])]
    try:
        return claim_parts(hyps, lhs, rhs, conds)
    except RecursionError:      # the printer recurses per level; the kernel and the replay do not (RT13)
        return {"statement": TOO_DEEP, "hypotheses": [TOO_DEEP] * len(hyps), "conditions": [TOO_DEEP] * len(conds),
                "for": []}


def run(args) -> int:
    from verigrad.errors import UsageError
    missing = [p for p in args.traces if not Path(p).is_file()]
    if missing:
        raise UsageError(f"no such trace file: {missing[0]}")
    # The replay and the printing read one snapshot of each file: a trace swapped after
    # the replay could otherwise print another statement than the one replayed.
    with tempfile.TemporaryDirectory(prefix="verigrad-check-") as tmp:
        snapshot = {}
        for k, p in enumerate(args.traces):
            copy = Path(tmp) / f"{k}.json"
            copy.write_bytes(Path(p).read_bytes())
            snapshot[str(copy)] = p
        code, verdicts = check(list(snapshot))
        statements: dict = {}
        for v in verdicts:
            if v["status"] == "PROVED":
                v.update(statements.setdefault((v["trace"], v["step"]), statement(v["trace"], v["step"])))
            if "trace" in v:
                v["trace"] = snapshot.get(v["trace"], v["trace"])
    for v in verdicts:
        for field in ("claim", "reason"):           # names and a trace's words cannot fake lines of the report
            if field in v and not str(v[field]).isprintable():
                v[field] = json.dumps(v[field])
        if args.json:
            print(json.dumps(v))
        elif v["status"] == "PROVED":
            extra = "".join(f"\n    if {h}" for h in v["hypotheses"]) + "".join(f"\n    under {c}" for c in v["conditions"])
            extra += f"\n    for {'; '.join(v['for'])}" if v["for"] else ""
            print(f"{v['trace']}: PROVED {v['claim']}\n    {v['statement']}{extra}\n    axioms: {', '.join(v['axioms']) or 'none'}")
        elif v["status"] == "REFUSED":
            print(f"{v['trace']}: REFUSED: {v['reason']}")
        else:
            print(f"error: {v['reason']}")
    return code
