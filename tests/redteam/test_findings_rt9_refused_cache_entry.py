"""Found while fixing RT9-A1: since the reporting process replays every "proved" itself
(RT8-C1), a worker checks a cache entry only against the file's goals, by decoding its
trace (``library._replayed``). An entry that records the right goals but whose steps do
not replay (stale, or planted) was then refused by the reporting process, and the theorem
read "failed" on every run: a planted entry decided a verdict (a wrong "failed" for a
true theorem), where it may only cost time. Now a refused cache entry is proved again."""
import json

from _verify_files import own_cache, statement, verify


def test_a_cache_entry_that_does_not_replay_is_proved_again(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "twice.py"
    path.write_text(statement("x + x", "2 * x", "real", steps=["Eq[0].this.lhs.simplify()"]))
    assert verify(path, use_cache=True).status == "proved"
    (trace_file,) = (tmp_path / "cache" / "verify").glob("*.trace.json")
    trace = json.loads(trace_file.read_text())
    claim = trace["claims"][0]["step"]
    trace["steps"][claim]["rule"] = "refl"          # the recorded statement stays; the step no longer replays
    trace_file.write_text(json.dumps(trace))
    rec = verify(path, use_cache=True)
    assert rec.status == "proved" and not rec.cached, (rec.status, rec.reason)
