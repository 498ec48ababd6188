"""Red team RT2-D1 (fixed: a cache hit takes the theorem's name from the library and its
LaTeX from the replayed theorems): a planted ``verify`` cache entry showed a false theorem
proved.

The cache believes no "proved" without replaying its trace to exactly what the theorem
file states (``library._load_cached``), but it kept every other field of the planted
record: its ``name`` (the row ``verify`` prints, the file ``verify --proofs`` writes) and
its ``latex`` (the statement the HTML proof browser shows for a proved theorem). With two
theorem files, ``good.py`` (``x + x = 2 x``, proved) and ``bad.py`` (``x + x = x``, false),
their entries with the names swapped and good's LaTeX edited::

    $ verigrad verify good.py bad.py          # both from the cache
     bad      proved      2       1  cached
     good     unproved    2       0  cached

and ``bad``'s FALSE label was lost too (``_judge_unproved`` evaluated good's goals, found
by the planted name); ``verify --json good.py`` gave ``"latex": "\\vdash x + x = x"``, and
a name ``../x`` made ``verify --proofs DIR`` write outside DIR. Now name, area and file
come from the library's entry for the key, and a proved record's text and LaTeX both from
the theorems the kernel replayed.
"""
import json
import os
import subprocess
import sys

from _verify_files import own_cache, statement, verify

GOOD = statement("x + x", "2 * x", "real", steps=["Eq[-1].this.lhs.simplify()"])
BAD = statement("x + x", "x", "real", steps=["Eq[-1].this.lhs.simplify()"])


def _plant(cache, edit):
    """Apply ``edit(record)`` to every stored record (not the traces)."""
    for p in (cache / "verify").glob("*.json"):
        if p.name.endswith(".trace.json"):
            continue
        rec = json.loads(p.read_text())
        edit(rec)
        p.write_text(json.dumps(rec))


def test_a_planted_record_names_no_other_theorem(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(GOOD)
    bad.write_text(BAD)
    assert verify(good, use_cache=True).status == "proved"          # stored
    assert verify(bad, use_cache=True).status == "plausible"

    def swap(rec):
        rec["name"] = {"good": "bad", "bad": "good"}[rec["name"]]
        if rec["status"] == "proved":
            rec["latex"] = r"\vdash x + x = x"
            rec["file"] = str(bad)
    _plant(tmp_path / "cache", swap)
    g, b = verify(good, use_cache=True), verify(bad, use_cache=True)
    assert g.cached and not b.cached      # an unproved entry is never believed: checked again (RT10-A1)
    assert not (b.name == "bad" and b.status == "proved") and not (g.name == "bad" and g.status == "proved")
    assert (g.name, g.status, g.file) == ("good", "proved", str(good)), (g.name, g.status, g.file)
    assert (b.name, b.status) == ("bad", "plausible"), (b.name, b.status)
    assert g.latex == r"\vdash x + x = 2 \, x" and g.statement == "|- x + x = 2*x", (g.latex, g.statement)


def test_verify_proofs_writes_under_its_folder_whatever_a_record_says(tmp_path):
    env = dict(os.environ, VERIGRAD_CACHE=str(tmp_path / "cache"))
    good = tmp_path / "good.py"
    good.write_text(GOOD)
    cmd = [sys.executable, "-m", "verigrad.cli", "verify", str(good)]
    assert subprocess.run(cmd, env=env, capture_output=True, timeout=600).returncode == 0
    _plant(tmp_path / "cache", lambda rec: rec.update(name="../escaped"))
    done = subprocess.run(cmd + ["--proofs", str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and "escaped" not in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "escaped.trace.json").exists()
    assert (tmp_path / "out" / "good.trace.json").is_file()        # the neighbour: its own trace, cached
