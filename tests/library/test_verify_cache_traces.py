"""The verify cache keeps proof traces and replays them: a stale or planted entry can
cost time, never a verdict (issue 10)."""
import json
import subprocess
import sys
import textwrap

import pytest

from verigrad.proof import library

TRUE = '''
"""softmax sums to one."""
from verigrad.proof import *
from {helper} import TOTAL


@apply
def apply(x):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](softmax(x)[j]), TOTAL)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.function.definition
    Eq << Eq[-1].this.lhs.simplify()
'''


@pytest.fixture
def theorem(tmp_path, monkeypatch):
    """A theorem file outside the library that imports a helper module of its own."""
    monkeypatch.setenv("VERIGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "vg_total_helper.py").write_text("TOTAL = 1\n")
    path = tmp_path / "sums.py"
    path.write_text(TRUE.format(helper="vg_total_helper"))
    return path


def verify(path):
    from verigrad.proof import script
    script.forget()
    for m in [m for m in sys.modules if m.startswith("_verigrad_file_") or m == "vg_total_helper"]:
        del sys.modules[m]
    (rec,) = library.verify_library(infos=[library.file_info(path)], jobs=1)
    return rec


def test_a_cached_proof_is_replayed_not_believed(theorem):
    first = verify(theorem)
    assert first.status == "proved" and not first.cached and first.trace is not None
    again = verify(theorem)
    assert again.status == "proved" and again.cached
    assert again.theorems and again.statement == first.statement


def test_an_edited_helper_module_is_not_proved_from_the_cache(theorem, tmp_path):
    assert verify(theorem).status == "proved"
    (tmp_path / "vg_total_helper.py").write_text("TOTAL = 2\n")      # now the file states 2
    rec = verify(theorem)
    assert rec.status != "proved" and not rec.cached


def test_a_planted_entry_is_not_believed(theorem, tmp_path):
    """A record saying "proved" with the trace of another (true) theorem, planted at the
    key of a false file, is replayed, found to prove something else, and ignored."""
    good = verify(theorem)
    by_module = {}
    false_file = tmp_path / "false_sums.py"
    false_file.write_text(TRUE.format(helper="vg_total_helper").replace("TOTAL)", "TOTAL + 1)"))
    info = library.file_info(false_file)
    key = library.cache_key(info, by_module)
    record = good.to_json() | {"name": info.name, "file": str(false_file)}
    (library.cache_dir() / f"{key}.json").write_text(json.dumps(record))
    (library.cache_dir() / f"{key}.trace.json").write_text(json.dumps(good.trace))
    rec = verify(false_file)
    assert rec.status != "proved" and not rec.cached
    # a planted "proved" without any trace is not believed either
    (library.cache_dir() / f"{key}.trace.json").unlink()
    (library.cache_dir() / f"{key}.json").write_text(json.dumps(record))
    assert verify(false_file).status != "proved"


def test_an_edited_trace_is_refused_by_the_checker(theorem, tmp_path):
    rec = verify(theorem)
    path = tmp_path / "proof.trace.json"
    path.write_text(json.dumps(rec.trace))
    ok = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", str(path)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PROVED" in ok.stdout and "axioms:" in ok.stdout
    # edit one step: the number 1 in the statement becomes 2
    trace = rec.trace
    k = next(i for i, o in enumerate(trace["objects"]) if o == ["Num", ["q", 1, 1]])
    trace["objects"][k] = ["Num", ["q", 2, 1]]
    path.write_text(json.dumps(trace))
    bad = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", str(path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "REFUSED" in bad.stdout, bad.stdout



def test_a_cached_record_names_the_file_where_it_is_now(tmp_path, monkeypatch):
    """The cache key hashes contents, not paths: a library theorem proved in another
    checkout (another worktree, a removed clone) finds the same entry, and the record
    must point at this checkout's file, which exists, not at the one it was proved from
    (the site links and shows its source)."""
    monkeypatch.setenv("VERIGRAD_CACHE", str(tmp_path / "cache"))
    info = library.load_library()[0]
    (first,) = library.verify_library(infos=[info], jobs=1)
    assert first.status == "proved" and not first.cached
    (entry,) = [p for p in (tmp_path / "cache" / "verify").glob("*.json") if not p.name.endswith(".trace.json")]
    entry.write_text(json.dumps(json.loads(entry.read_text()) | {"file": "/gone/checkout/theorem.py"}))
    (again,) = library.verify_library(infos=[info], jobs=1)
    assert again.cached and again.status == "proved"
    assert again.file == info.file
