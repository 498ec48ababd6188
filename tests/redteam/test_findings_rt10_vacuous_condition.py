"""Red team RT10-A2 (open): a planted cache entry makes a FALSE theorem file read proved,
through a side condition that never holds.

A worker checks a cached "proved" against the file's goals by decoding its trace
(``library._recorded`` / ``_replayed``): each claim's ``lhs``, ``rhs`` and ``hyps`` must be
the file's goals and givens. A claim's side conditions (``conds``) are not compared. The
kernel can prove ``x + x = x`` under the condition ``0 != 0`` (from ``x*y/y = x [under y
!= 0]`` instantiated at ``y = 0``, rewritten into ``x + x*0/0``), so the entry of ``bad.py``
(``x + x = x``: FALSE on a fresh run) rewritten with that trace and ``"status":
"proved"``::

    $ verigrad verify --steps bad.py            # exit 0
    bad  proved  bad.py
             Eq[0]  proved   x + x = x
     bad      proved      2       4  cached  |- x + x = x   [under 0 != 0]
    1 proved, 0 unproved, 0 failed (1 theorem, 1 from the cache)

and ``verify --json`` gives ``"status": "proved"``, ``"latex": "\\vdash x + x = x"``, step
``Eq[0]`` proved ``x + x = x``. ``verigrad verify --no-cache bad.py`` reads FALSE.
"""
import json

from _verify_files import cache_entries, own_cache, statement, verify

BAD = statement("x + x", "x", "real", steps=["Eq[-1].this.lhs.simplify()"])


def _vacuous_trace():
    """The trace of ``|- x + x = x [under 0 != 0]`` (claim and step ``Eq[0]``)."""
    from verigrad.kernel import terms as T
    from verigrad.kernel import theorem as K
    from verigrad.trace import trace_of
    x, y = T.Var("x", (), ()), T.Var("y", (), ())
    a = K.prove_equal(T.Mul((x, y, T.Pow(y, T.Num(-1)))), x)          # x*y/y = x  [y != 0]
    b = K.instantiate(a, {y: T.Num(0)})                                 # x*0/0 = x  [0 != 0]
    target = T.Add((x, b.lhs))
    th = K.trans(K.symm(K.rewrite(b, target)), K.prove_equal(target, x))
    assert (th.lhs, th.rhs) == (T.Add((x, x)), x) and th.conds
    full = trace_of([("bad", th), ("Eq[0]", th)])
    return dict(full, claims=full["claims"][:1], proof_steps=full["claims"][1:])


def test_a_planted_proof_under_a_false_condition_does_not_prove_a_false_theorem(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    assert verify(path, use_cache=True).status == "plausible"          # stored
    (entry,) = cache_entries(tmp_path / "cache")
    rec = json.loads(entry.read_text())
    rec.update(status="proved", reason="")
    rec["steps"][0]["status"] = "proved"
    entry.write_text(json.dumps(rec))
    entry.with_name(entry.name[:-len(".json")] + ".trace.json").write_text(json.dumps(_vacuous_trace()))
    again = verify(path, use_cache=True)
    assert again.status != "proved", (again.status, again.statement, again.conditions)
