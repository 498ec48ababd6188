"""Red team RT9-A1 (helper rt9, fixed as far as it can be): ``verify FILE.py`` reports a file proved when its
worker's trace replays to *any* true theorem, not the one the file states.

Since RT8-C1 the reporting process believes a worker's "proved" only when its own kernel
replays the trace that came with the answer, and then shows the replayed theorems'
statement. But ``library._confirmed`` never compares the replayed theorems with the
file's goals (a cache hit is compared, by ``_replayed``, in the worker; a fresh answer is
not compared anywhere), and never looks at their hypotheses. The file below states
``x + 1 = x + 2`` (false at x = 0) and, in its worker, rewrites the answer on its way out
(``json.dumps``) to status "proved" with the trace of ``|- x = x`` (``refl``), also
replaying under the step labels ``Eq[0]``, ``Eq[1]``. ``verigrad verify evil.py`` then
exits 0 and prints::

    evil  proved  .../evil.py
                 Eq[0]  proved   1 + x = 2 + x        (with --steps)
     evil     proved      2       0  0.007

and the JSON record reads ``"status": "proved"``, ``"display": "1 + x = 2 + x"`` (the
file's goal as written, taken from the worker unchecked) beside ``"statement": "|- x =
x"``. The same trace of ``x + 1 = x + 2 |- x + 1 = x + 2`` (an ``assume``) is believed
as well: nothing checks that a replayed claim rests on no hypothesis.

Command: ``verigrad verify evil.py --steps --no-cache`` (exit 0).

What can be fixed, and what cannot. Which statement a file makes is known only by running
its code, in a process it controls: a check of the claims against the goals "as the file
states them" is a check against what the file's worker says, and a hostile worker says
what matches (a second worker that only states the goals would be rewritten the same
way). So for a file one does not trust, what ``verify`` proves is the statement it
prints, and the fix is that it prints only what the kernel replayed beside "proved": the
record's display is the replayed claims (never the worker's text), no step keeps the
worker's display, and for a file from outside the library the table's note is the
kernel's statement in full (with its hypotheses, ``h |- ...``). The false goal is never
shown proved; README says the rest.
"""
import json

import pytest

from _verify_files import run_cli

EVIL = '''
from verigrad.proof import *
import json as _json
_dumps = _json.dumps


def _swap(obj, *args, **kwargs):
    if isinstance(obj, dict) and isinstance(obj.get("ok"), dict) and obj["ok"]["record"].get("name") == "evil":
        from verigrad.kernel import terms as T
        from verigrad.kernel.theorem import assume, refl
        from verigrad.trace import trace_of
        x = T.Var("x")
        th = HYPOTHESIS
        full = trace_of([("evil", th), ("Eq[0]", th), ("Eq[1]", th)])
        ans = obj["ok"]
        ans["trace"] = dict(full, claims=full["claims"][:1], proof_steps=full["claims"][1:])
        ans["record"].update(status="proved", reason="", line=None)
        for s in ans["record"]["steps"]:
            s["status"] = "proved"
        ans["false"] = ""
    return _dumps(obj, *args, **kwargs)


_json.dumps = _swap


@apply
def apply(x):
    return Equality(x + 1, x + 2)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.simplify()
'''

CLAIMS = {"refl": "refl(x)", "assume": "assume(x + T.Num(1), x + T.Num(2))"}


def _run(args, tmp_path):
    return run_cli(args, tmp_path)


SHOWN = {"refl": "|- x = x", "assume": "x + 1 = x + 2 |- x + 1 = x + 2"}


def _false_goal(text):
    return "2+x" in text.replace(" ", "") or "x+2" in text.replace(" ", "")


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_rt9_a1_a_trace_of_another_theorem_is_shown_as_that_theorem(tmp_path, claim):
    f = tmp_path / "evil.py"
    f.write_text(EVIL.replace("HYPOTHESIS", CLAIMS[claim]))
    done = _run(["verify", str(f), "--no-cache", "--json"], tmp_path)
    (rec,) = json.loads(done.stdout)
    if rec["status"] == "proved":
        assert rec["statement"] == SHOWN[claim], rec["statement"]
        assert claim == "assume" or not _false_goal(rec["display"]), rec["display"]
        assert all(s["display"] == "" for s in rec["steps"])
        table = _run(["verify", str(f), "--no-cache"], tmp_path).stdout
        assert SHOWN[claim] in table, table          # the note: what the kernel proved, in full


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_rt9_a1_steps_do_not_show_the_false_goal_proved(tmp_path, claim):
    """A step shown proved reads as the kernel's theorem, hypotheses included
    (``x + 1 = x + 2 |- x + 1 = x + 2`` for the ``assume``)."""
    f = tmp_path / "evil.py"
    f.write_text(EVIL.replace("HYPOTHESIS", CLAIMS[claim]))
    done = _run(["verify", str(f), "--no-cache", "--steps"], tmp_path)
    shown = [line for line in done.stdout.splitlines() if "Eq[" in line]
    assert shown
    assert not any("proved" in line and _false_goal(line) and "|-" not in line for line in shown), shown
