"""Red team RT10-A1 (open): a planted cache entry decides a verdict: a true, correctly
proved theorem file reads "unproved".

``library.verify_library`` proves again a cache hit the reporting process refuses only
when the hit's status is "failed" (``answered``: ``rec.cached and rec.status ==
"failed"``). An entry whose status is "plausible" is believed as it is: the worker
(``_load_cached``) checks a proof's trace against the file's goals only for a "proved"
entry, and the reporting process (``_confirmed``) returns a non-proved record unchanged.
So editing one field of the stored record of ``good.py`` (``x + x = 2 x``, proved)::

    $ verigrad verify good.py                       # proved, stored
    $ python -c 'edit the record: "status": "plausible", "reason": "planted"'
    $ verigrad verify good.py                       # exit 1
     good     unproved      2       1  cached
    good: NOT PROVED (the proof does not reach its goal): planted

(and the unproved record still lists the entry's axioms: ``axioms 1``, "axioms used:
ring"), while ``verigrad verify --no-cache good.py`` reads proved. The design says a stale
or planted entry can cost time, never a verdict.
"""
import json

from _verify_files import cache_entries, own_cache, statement, verify

GOOD = statement("x + x", "2 * x", "real", steps=["Eq[-1].this.lhs.simplify()"])


def test_a_planted_unproved_entry_does_not_unprove_a_true_theorem(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "good.py"
    path.write_text(GOOD)
    assert verify(path, use_cache=True).status == "proved"          # stored
    (entry,) = cache_entries(tmp_path / "cache")
    rec = json.loads(entry.read_text())
    rec.update(status="plausible", reason="planted")
    entry.write_text(json.dumps(rec))
    again = verify(path, use_cache=True)
    assert again.status == "proved", (again.status, again.reason, again.cached)
