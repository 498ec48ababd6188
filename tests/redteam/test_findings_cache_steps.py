"""Red team RT3-B1 (helper rt3-b; fixed: a cache hit shows a step proved only when the trace
replays its theorem, with that theorem's statement): a planted ``verify`` cache entry showed
false steps proved.

RT2-D1 made a cache hit take a proved record's name from the library and its statement and
LaTeX from the replayed goals, but every *step* of the record (``steps``: status, statement,
LaTeX, the text as written) and the record's ``display`` (the "As written" line of the HTML
page) were kept from the entry. With ``good.py`` (``x + x = 2 x``, proved by one
``simplify``) verified once, then its entry edited (a third step ``1 + 1 = 3`` marked
proved, the goal's text and the record's display ``x + x = x``)::

    $ verigrad verify --steps good.py          # exit 0, from the cache
    good  proved  good.py
                 Eq[0]  proved   x + x = x
                 Eq[1]  proved   x + x = 2*x
                 Eq[2]  proved   1 + 1 = 3

and the HTML proof page showed the same steps as "the kernel's reading". An unproved
(``plausible``) record was stored with no trace at all, so its steps' "proved" were believed
outright.

Now the stored trace holds the theorem of every proved step too (under ``proof_steps``,
which ``verigrad check`` does not report), a hit shows a step proved only when the kernel
replays its theorem (resting on no hypothesis but the file's givens), with that theorem's
statement and LaTeX; the text as written, which cannot be replayed, is dropped for steps
and taken from the file for the record.
"""
import json
import os
import subprocess
import sys

from _verify_files import cache_entries, own_cache, statement, verify

GOOD = statement("x + x", "2 * x", "real", steps=["Eq[-1].this.lhs.simplify()"])
# a proof that proves a step (x + x = 2 x) and never reaches its (false) goal
UNFINISHED = statement("x + x", "x", "real", steps=["(x + x).this.simplify()"])




def _plant(path):
    rec = json.loads(path.read_text())
    rec["display"] = "x + x = x"
    rec["steps"][0].update(display="x + x = x", statement="x + x = x", latex="x + x = x")
    rec["steps"].append(dict(rec["steps"][-1], label="Eq[9]", index=9, status="proved", display="1 + 1 = 3",
                             statement="1 + 1 = 3", latex="1 + 1 = 3"))
    path.write_text(json.dumps(rec))


def _shown_proved(rec):
    return {t for s in rec.steps if s.status == "proved" for t in (s.display, s.statement, s.latex)}


def test_a_planted_step_is_not_shown_proved(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    good = tmp_path / "good.py"
    good.write_text(GOOD)
    first = verify(good, use_cache=True)
    assert first.status == "proved" and not first.cached
    (entry,) = cache_entries(tmp_path / "cache")
    _plant(entry)
    rec = verify(good, use_cache=True)
    assert rec.cached and rec.status == "proved"
    shown = _shown_proved(rec) | {rec.display}
    assert not {"x + x = x", "1 + 1 = 3"} & shown, shown
    # the true neighbour: the real steps are still shown proved, as the kernel states them
    assert [(s.label, s.status) for s in rec.steps[:2]] == [("Eq[0]", "proved"), ("Eq[1]", "proved")]
    assert rec.steps[0].statement == "x + x = 2*x" and rec.display == "x + x = 2*x", (rec.steps[0], rec.display)
    assert [s.status for s in rec.steps if s.label == "Eq[9]"] == ["pending"]
    # the command line, from a cache that fresh processes made and read (a key made in this
    # process, where earlier tests imported modules already, may differ from a fresh one's)
    env = dict(os.environ, VERIGRAD_CACHE=str(tmp_path / "cli-cache"))

    def cli():
        return subprocess.run([sys.executable, "-m", "verigrad.cli", "verify", "--steps", str(good)], env=env,
                              capture_output=True, text=True, timeout=600)
    assert cli().returncode == 0
    (entry,) = [p for p in (tmp_path / "cli-cache" / "verify").glob("*.json") if not p.name.endswith(".trace.json")]
    _plant(entry)
    done = cli()
    proved = [line for line in done.stdout.splitlines() if " proved " in line]
    assert done.returncode == 0 and "1 from the cache" in done.stdout, done.stdout + done.stderr
    assert not any("1 + 1 = 3" in line or "x + x = x" in line for line in proved), done.stdout
    assert any("Eq[0]" in line and "x + x = 2*x" in line for line in proved), done.stdout


def test_an_unproved_record_shows_only_replayed_steps_proved(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "unfinished.py"
    path.write_text(UNFINISHED)
    first = verify(path, use_cache=True)
    assert first.status == "plausible"
    fresh = [(s.label, s.status, s.statement) for s in first.steps]
    (entry,) = cache_entries(tmp_path / "cache")
    _plant(entry)
    rec = verify(path, use_cache=True)
    assert rec.status == "plausible" and not rec.cached     # an unproved entry is checked again (RT10-A1)
    shown = _shown_proved(rec)
    assert not {"x + x = x", "1 + 1 = 3"} & shown, shown
    # the steps the proof did prove are still shown proved from the cache
    assert [(s.label, s.status, s.statement) for s in rec.steps[:len(fresh)]] == fresh
    assert any(status == "proved" for _, status, _ in fresh)
