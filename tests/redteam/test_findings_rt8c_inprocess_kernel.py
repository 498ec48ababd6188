"""Red team RT8-C1 (helper rt8c, fixed): ``verigrad verify FILE.py`` ran the theorem
file's Python in the process that reports the verdict, so a file could rebind the
kernel's own functions before its proof ran, and ``verify`` reported a false statement
proved.

The file below wraps ``verigrad.kernel.theorem._prove_equal`` so that a failed decision
returns ``_make(...)`` of the goal instead of a ``Failure``, then states and "proves"
``x + 1 = x + 2`` (false for every real x) with one ``simplify`` step. ``verigrad verify``
printed ``evil  proved`` (statement ``|- 1 + x = 2 + x``, axioms: ring).

The fix (``verigrad.proof.workers``, ``library._confirmed``): theorem files run only in
worker processes, which answer in JSON (unpickling a hostile worker's answer would run
its code in the parent), and the parent, which never imports a theorem file, reads
"proved" only where its own kernel replays the trace that came with the answer. The
tests below also try the worker lying outright: rebinding the worker-side record code,
and writing a forged answer straight onto the worker's pipe.
"""
import json

import pytest

from _verify_files import run_cli, statement

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
    return run_cli(args, tmp_path)


def test_rt8c_c1_verify_does_not_report_a_false_statement_proved(tmp_path):
    """``x + 1 = x + 2`` is false (at x = 0: 1 != 2); ``verify`` must not read "proved"."""
    f = tmp_path / "evil.py"
    f.write_text(EVIL)
    done = _run(["verify", str(f), "--no-cache", "--json"], tmp_path)
    (rec,) = json.loads(done.stdout)
    assert rec["statement"].replace(" ", "") in ("|-1+x=2+x", "|-x+1=x+2")   # the statement is the false one
    assert rec["status"] != "proved", f"verify reported the false {rec['statement']!r} proved"


def test_rt8c_c1_no_trace_is_written_and_nothing_is_cached(tmp_path):
    """A refused proof writes no trace with ``--proofs`` and leaves no cache entry: the
    next run (with the cache) checks it again and refuses it again."""
    f = tmp_path / "evil.py"
    f.write_text(EVIL)
    first = _run(["verify", str(f), "--proofs", str(tmp_path / "proofs")], tmp_path)
    assert first.returncode == 1 and "REFUSED" in first.stdout
    assert not list((tmp_path / "proofs").glob("*.trace.json"))
    again = _run(["verify", str(f), "--json"], tmp_path)
    (rec,) = json.loads(again.stdout)
    assert rec["status"] == "failed" and not rec["cached"]


# The worker, lying: the worker's answer is rewritten on its way out (``json.dumps``, which
# the worker's loop looks up when it answers) to "proved" with no trace, and the parent's
# ``_confirmed`` is rebound (in the worker's copy only: the parent never runs this file).
LIAR = EVIL.replace("_K._prove_equal = _lie", """_K._prove_equal = _lie
import json as _json
import verigrad.proof.library as _L
_dumps = _json.dumps


def _lying_dumps(obj, *args, **kwargs):
    if isinstance(obj, dict) and isinstance(obj.get("ok"), dict):
        obj["ok"]["record"].update(status="proved", reason="", axioms=["ring"])
        obj["ok"]["trace"] = None
    return _dumps(obj, *args, **kwargs)


_json.dumps = _lying_dumps
_L._confirmed = lambda info, answer, error: _L.TheoremRecord(info.name, info.area, info.file, "proved")""")

# The worker, forging: the file finds the worker's pipe and writes an answer of its own
# ("proved", a cache hit, a trace of nothing) before the worker answers.
FORGER = EVIL.replace("_K._prove_equal = _lie", """_K._prove_equal = _lie
import gc, json
from multiprocessing.connection import Connection
for _c in [o for o in gc.get_objects() if isinstance(o, Connection)]:
    try:
        _c.send_bytes(json.dumps({"ok": {"record": {"name": "evil", "area": "file", "file": "", "status": "proved",
                                  "statement": "|- 1 + x = 2 + x", "axioms": ["ring"]},
                                  "trace": {"format": "verigrad-proof-trace", "version": 1, "objects": [],
                                            "steps": [], "claims": [], "proof_steps": []},
                                  "cached": True}}).encode())
    except OSError:
        pass""")


# ... and an answer the printers would choke on (a traceback in the CLI, not a verdict)
MALFORMED = FORGER.replace('"axioms": ["ring"]}', '"axioms": ["ring"], "seconds": "fast", "steps": [{"label": [1]}]}')


@pytest.mark.parametrize("source", [LIAR, FORGER, MALFORMED], ids=["rebinds-the-worker", "forges-the-answer",
                                                                  "malformed-answer"])
def test_rt8c_c1_a_lying_worker_is_not_believed(tmp_path, source):
    f = tmp_path / "evil.py"
    f.write_text(source)
    done = _run(["verify", str(f), "--no-cache", "--json"], tmp_path)
    (rec,) = json.loads(done.stdout)
    assert rec["status"] != "proved" and done.returncode == 1, rec
    assert "Traceback" not in done.stderr


def test_rt8c_c1_the_reporting_process_never_runs_the_files_code(tmp_path):
    """Not even a package the file imports: the cache key looks the file's imports up
    (to hash their sources), and ``importlib.util.find_spec("pkg.sub")`` would import
    ``pkg``. Here ``pkg/__init__.py`` notes which process ran it, and patches the kernel
    as the file above does."""
    pkg = tmp_path / "evilpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import multiprocessing, pathlib\n"
        "with open(pathlib.Path(__file__).parent.parent / 'ran_in.txt', 'a') as f:\n"
        "    f.write('worker\\n' if multiprocessing.parent_process() is not None else 'parent\\n')\n"
        + EVIL.split("@apply")[0].replace("from verigrad.proof import *", ""))
    (pkg / "sub.py").write_text("X = 1\n")
    f = tmp_path / "evil.py"
    f.write_text("from evilpkg.sub import X\n" + EVIL.replace("_K._prove_equal = _lie", ""))
    done = _run(["verify", str(f), "--no-cache", "--json"], tmp_path)
    (rec,) = json.loads(done.stdout)
    assert rec["status"] != "proved", rec
    ran = (tmp_path / "ran_in.txt").read_text().split()
    assert ran and set(ran) == {"worker"}, ran


# A file that proves a true theorem honestly, then stays in its worker: every later answer
# that worker sends is rewritten to "proved" with this file's (replayable) trace.
PERSISTER = '''
from verigrad.proof import *
import json as _json
_dumps = _json.dumps
_mine = {}


def _rewrite(obj, *args, **kwargs):
    if isinstance(obj, dict) and isinstance(obj.get("ok"), dict):
        rec = obj["ok"]["record"]
        if rec["name"] == "persister" and rec["status"] == "proved":
            _mine["trace"] = obj["ok"]["trace"]
        elif "trace" in _mine:
            rec.update(status="proved", reason="")
            obj["ok"]["trace"] = _mine["trace"]
    return _dumps(obj, *args, **kwargs)


_json.dumps = _rewrite


@apply
def apply(x):
    return Equality(x + x, 2 * x)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.simplify()
'''

# An honest file with a false goal: its proof does not reach it.
FALSE_GOAL = statement("x + 1", "x + 2", "real", steps=["Eq[0].this.lhs.simplify()"])


def test_rt8c_c1_a_file_cannot_reach_the_next_files_verdict(tmp_path):
    """A theorem file outside the library is the last job its worker runs (one worker
    here, so without that the false file would run right after it in the same process)."""
    (tmp_path / "persister.py").write_text(PERSISTER)
    (tmp_path / "false_goal.py").write_text(FALSE_GOAL)
    done = _run(["verify", str(tmp_path / "persister.py"), str(tmp_path / "false_goal.py"), "-j", "1", "--no-cache",
                 "--json"], tmp_path)
    by_name = {r["name"]: r for r in json.loads(done.stdout)}
    assert by_name["persister"]["status"] == "proved"          # the control: it proves what it states
    assert by_name["false_goal"]["status"] != "proved", by_name["false_goal"]
