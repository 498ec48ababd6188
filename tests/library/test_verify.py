"""``verigrad verify`` and the library API: parallel checking, the content-hash cache,
exit codes, bad input."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from verigrad.proof import library


def cli(*args, cache):
    env = {**os.environ, "VERIGRAD_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "verigrad.cli", "verify", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_verify_json_then_warm_from_the_cache(tmp_path):
    r = cli("softmax.sums_to_one", "vjp.dense_dx", "--json", "-j", "2", cache=tmp_path)
    assert r.returncode == 0, r.stderr
    recs = json.loads(r.stdout)
    assert [x["name"] for x in recs] == ["softmax.sums_to_one", "vjp.dense_dx"]
    assert all(x["status"] == "proved" and not x["cached"] and x["axioms"] for x in recs)
    assert all(s["latex"] and s["statement"] for x in recs for s in x["steps"])
    warm = json.loads(cli("softmax.sums_to_one", "vjp.dense_dx", "--json", cache=tmp_path).stdout)
    assert all(x["cached"] for x in warm)
    assert [x["statement"] for x in warm] == [x["statement"] for x in recs]


def test_exit_code_is_one_unless_everything_selected_is_proved(tmp_path):
    """A proof that does not reach its goal (here a false one) is plausible, not proved:
    exit code 1."""
    unfinished = tmp_path / "unfinished.py"
    unfinished.write_text(textwrap.dedent('''
        """A false claim: softmax sums to two."""
        from verigrad.proof import *


        @apply
        def apply(x):
            n = x.shape[0]
            j = Symbol.j(integer=True)
            return Equality(Sum[j:n](softmax(x)[j]), 2)


        @prove
        def prove(Eq):
            n = Symbol.n(domain=[1, oo], integer=True)
            x = Symbol.x(shape=(n,), real=True)
            Eq << apply(x)
    '''))
    r = cli(str(unfinished), cache=tmp_path)
    assert r.returncode == 1
    assert "plausible" not in r.stdout and "Traceback" not in r.stderr
    # numerically refuted: labelled FALSE, with where the two sides differ
    assert "FALSE" in r.stdout and "lhs = 1.0, rhs = 2.0" in r.stdout, r.stdout
    assert "0 proved, 0 unproved, 1 FALSE, 0 failed" in r.stdout


def test_an_unproved_true_goal_reads_unproved_not_false(tmp_path):
    """A goal the proof does not reach but that holds numerically is "unproved", never FALSE."""
    unfinished = tmp_path / "unfinished_true.py"
    unfinished.write_text(textwrap.dedent('''
        """A true claim whose proof stops before it: tanh(x) (e^x + e^-x) = e^x - e^-x."""
        from verigrad.proof import *


        @apply
        def apply(x):
            n = x.shape[0]
            j = Symbol.j(integer=True)
            return Equality(Sum[j:n](tanh(x[j]) * (exp(x[j]) + exp(-x[j]))), Sum[j:n](exp(x[j]) - exp(-x[j])))


        @prove
        def prove(Eq):
            n = Symbol.n(domain=[1, oo], integer=True)
            x = Symbol.x(shape=(n,), real=True)
            Eq << apply(x)
    '''))
    r = cli(str(unfinished), "--json", cache=tmp_path)
    (rec,) = json.loads(r.stdout)
    assert rec["status"] == "plausible" and "false" not in rec
    r = cli(str(unfinished), cache=tmp_path)
    assert r.returncode == 1 and "unproved" in r.stdout and "FALSE" not in r.stdout


@pytest.mark.parametrize("args, message, code", [
    (["no.such.theorem"], "no theorem matches", 3),
    (["--jobs", "0"], "--jobs/-j: must be at least 1", 2),
    (["--axioms", "nope"], "no theorem", 3),
    (["--timeout", "-1"], "--timeout: must be greater than 0", 2),
])
def test_bad_input_is_one_line_and_exit_code_three(tmp_path, args, message, code):
    r = cli(*args, cache=tmp_path)
    assert r.returncode == code
    assert message in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_theorem_file_outside_the_library_can_cite_the_library(tmp_path):
    f = tmp_path / "doubled.py"
    f.write_text(textwrap.dedent('''
        """Twice the softmax sums to two."""
        from verigrad.proof import *
        from verigrad.library.softmax import sums_to_one


        @apply
        def apply(x):
            j = Symbol.j(integer=True)
            return Equality(Sum[j:x.shape[0]](2 * softmax(x)[j]), 2)


        @prove
        def prove(Eq):
            n = Symbol.n(domain=[1, oo], integer=True)
            x = Symbol.x(shape=(n,), real=True)
            Eq << apply(x)
            Eq << sums_to_one.apply(x)
            Eq << 2 * Eq[-1]
    '''))
    r = cli(str(f), "--json", cache=tmp_path / "cache")
    assert r.returncode == 0, r.stdout + r.stderr
    (rec,) = json.loads(r.stdout)
    assert rec["status"] == "proved" and rec["cites"] == ["verigrad.library.softmax.sums_to_one"]


def test_axioms_lists_what_a_theorem_rests_on(tmp_path):
    r = cli("--axioms", "softmax.sums_to_one", cache=tmp_path)
    assert r.returncode == 0
    assert "ring" in r.stdout and "rests on" in r.stdout


def test_parallel_records_match_in_process_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIGRAD_CACHE", str(tmp_path))
    par = library.verify_library(["norm"], jobs=2)
    seq = [library.verify_theorem(r.name) for r in par]
    assert [(r.name, r.status, r.statement) for r in par] == [(r.name, r.status, r.statement) for r in seq]
    again = library.verify_library(["norm"], jobs=2)
    assert all(r.cached for r in again)


def test_the_cache_key_covers_every_cited_file(tmp_path, monkeypatch):
    root = tmp_path / "lib"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "base.py").write_text("x = 1\n")
    (root / "a" / "mid.py").write_text("from verigrad.library.a import base\n")
    (root / "b" / "top.py").write_text("from verigrad.library.a.mid import apply\n")
    monkeypatch.setattr(library, "ROOT", root)
    infos = {i.name: i for i in library.load_library(root)}
    assert infos["b.top"].cites == ["verigrad.library.a.mid"]
    by_module = {i.module: i for i in infos.values()}
    before = library.cache_key(infos["b.top"], by_module)
    (root / "a" / "base.py").write_text("x = 2\n")          # a file cited transitively
    assert library.cache_key(infos["b.top"], by_module) != before
    (root / "a" / "base.py").write_text("x = 1\n")
    assert library.cache_key(infos["b.top"], by_module) == before


LOOPS = '"""Never ends."""\nimport time\nwhile True:\n    time.sleep(0.1)\n'

HALF_AN_ANSWER = textwrap.dedent("""
    '''Begins an answer on its worker's pipe (a length, no message) and never finishes it.'''
    import gc, os, struct, time
    from multiprocessing.connection import Connection
    for c in [o for o in gc.get_objects() if isinstance(o, Connection)]:
        try:
            os.write(c.fileno(), struct.pack("!i", 1000))
        except OSError:
            pass
    while True:
        time.sleep(0.1)
    """)


@pytest.mark.parametrize("body", [LOOPS, HALF_AN_ANSWER], ids=["loops", "half_an_answer"])
def test_a_theorem_file_that_never_answers_is_stopped_at_the_time_limit(tmp_path, body):
    """``--timeout``: a file that runs past it reads failed ("timed out"), its worker is
    stopped, and the other theorems of the run are still checked. A worker that began an
    answer and stopped halfway is stopped too (its answer is read with the deadline)."""
    stuck = tmp_path / "stuck.py"
    stuck.write_text(body)
    r = cli(str(stuck), "softmax.sums_to_one", "--json", "-j", "1", "--timeout", "3", cache=tmp_path)
    assert r.returncode == 1, r.stderr
    recs = {x["name"]: x for x in json.loads(r.stdout)}
    assert recs["stuck"]["status"] == "failed" and recs["stuck"]["reason"].startswith("timed out: no answer after 3 s")
    assert recs["stuck"]["seconds"] == 3.0              # it ran for the whole limit
    assert recs["softmax.sums_to_one"]["status"] == "proved"
    quick = cli("softmax.sums_to_one", "--timeout", "60", cache=tmp_path)      # a limit not reached changes nothing
    assert quick.returncode == 0, quick.stderr


def _claims_a_huge_answer(job):
    import gc
    import struct
    from multiprocessing.connection import Connection
    for c in [o for o in gc.get_objects() if isinstance(o, Connection)]:
        try:
            os.write(c.fileno(), struct.pack("!i", -1) + struct.pack("!Q", 1 << 40))
        except OSError:
            pass
    time.sleep(60)


def test_an_answer_longer_than_the_limit_is_refused_unread():
    from verigrad.proof import workers
    got = []
    started = time.monotonic()
    workers.run_jobs([{"n": 1}], _claims_a_huge_answer, 1, lambda job, answer, error: got.append((answer, error)))
    assert got == [(None, f"the worker's answer has {1 << 40} bytes (at most {workers.LARGEST_ANSWER} are read)")]
    assert time.monotonic() - started < 30          # its worker stopped, not waited for
