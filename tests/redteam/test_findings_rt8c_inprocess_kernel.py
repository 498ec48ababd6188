"""Red team RT8-C1 (helper rt8c, open; a known gap, marked xfail strict until fixed): ``verigrad verify FILE.py`` runs the theorem file's
Python in the process that reports the verdict, so a file can rebind the kernel's own
functions before its proof runs, and ``verify`` reports a false statement proved.

The file below wraps ``verigrad.kernel.theorem._prove_equal`` so that a failed decision
returns ``_make(...)`` of the goal instead of a ``Failure``, then states and "proves"
``x + 1 = x + 2`` (false for every real x) with one ``simplify`` step. ``verigrad verify``
prints ``evil  proved`` (statement ``|- 1 + x = 2 + x``, axioms: ring), with
``--no-cache`` or not; ``verify --proofs DIR`` writes its trace, which ``verigrad check``
REFUSES (step 0, decide: the normal forms differ): the fresh process catches what
``verify`` itself reported as proved.

The kernel's docstring scopes this out ("inside one Python process this protection is a
guard against mistakes, not against a hostile caller"), but ``verify`` is the command the
README presents as "every step re-checked by the kernel ... a buggy tactic can fail a
proof, never prove a false theorem", and nothing in its output says that a proved here is
only as good as the file's code. A fix could replay each freshly made proof's trace with
``verigrad check``'s fresh process (as the cache already replays on a hit) before the
record reads "proved", or label such records as not independently checked.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

EVIL = '''
from verigrad.proof import *
import verigrad.kernel.theorem as _K

_orig = _K._prove_equal


def _lie(lhs, rhs, using, choices, plan):
    r = _orig(lhs, rhs, using, choices, plan)
    if isinstance(r, _K.Failure):
        return _K._make((), (), lhs, rhs, "decide", tuple(using), {"ring"}, args=(lhs, rhs, (), None))
    return r


_K._prove_equal = _lie


@apply
def apply(x):
    return Equality(x + 1, x + 2)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.simplify()
'''


def _run(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), VERIGRAD_CACHE=str(tmp_path / "cache"), VERIGRAD_WITNESS="0")
    return subprocess.run([sys.executable, "-m", "verigrad", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


@pytest.mark.xfail(strict=True, reason="RT8-C1 open: verify believes the in-process kernel; the trusted path is "
                   "verify --proofs DIR then verigrad check (the control below); fix: replay fresh traces in check's "
                   "fresh process before reporting proved")
def test_rt8c_c1_verify_does_not_report_a_false_statement_proved(tmp_path):
    """``x + 1 = x + 2`` is false (at x = 0: 1 != 2); ``verify`` must not read "proved"."""
    f = tmp_path / "evil.py"
    f.write_text(EVIL)
    done = _run(["verify", str(f), "--no-cache", "--json"], tmp_path)
    (rec,) = json.loads(done.stdout)
    assert rec["statement"].replace(" ", "") in ("|-1+x=2+x", "|-x+1=x+2")   # the statement is the false one
    assert rec["status"] != "proved", f"verify reported the false {rec['statement']!r} proved"


def test_rt8c_c1_control_check_refuses_the_trace(tmp_path):
    """The control (passes today): the trace ``verify --proofs`` writes for that run is
    REFUSED by ``verigrad check``'s fresh process."""
    f = tmp_path / "evil.py"
    f.write_text(EVIL)
    _run(["verify", str(f), "--no-cache", "--proofs", str(tmp_path / "proofs")], tmp_path)
    traces = sorted((tmp_path / "proofs").glob("*.trace.json"))
    assert traces, "verify --proofs wrote no trace"
    done = _run(["check", *map(str, traces)], tmp_path)
    assert done.returncode != 0 and "REFUSED" in done.stdout
