"""Red team RT-16 (fixed: a cache hit re-applies the complex-ring check): the verify cache reports a complex-symbol theorem proved that a fresh
run refuses. ``log(exp(z)) = z`` for a complex ``z`` (false: at z = 2 pi i the left side is
0) is "proved (cached)", exit 0.

A theorem file may declare ``Symbol.z(complex=True)``; ``script._conclude`` then accepts
the proof only if every rule and term of its theorems is a ring law (``complex_symbols.
ring_only``), so ``log(exp(z)) = z`` proved by ``.simplify()`` (axiom ``log_exp``) reads
"unproved" on a fresh run. But ``complex`` is not part of the kernel statement
(``TensorSymbol._compile`` makes the same ``Var("z", ())`` for a real and a complex z), and
a cache hit (``library._load_cached`` / ``_replayed``) checks only that the trace replays
to the file's ``(lhs, rhs)`` under its givens, never the complex-ring check (nor
``ctx.capped``). So the trace of the *real* theorem is accepted for the complex file.

Planted entry (the cache key is deterministic; the trace is the real twin's)::

    $ cat logexp_c.py
    from verigrad.proof import *

    @apply
    def apply(z):
        return Equality(log(exp(z)), z)

    @prove
    def prove(Eq):
        z = Symbol.z(complex=True)
        Eq << apply(z)
        Eq << Eq[0].this.lhs.simplify()
    $ verigrad verify --no-cache logexp_c.py     # exit 1
    logexp_c  unproved ... complex symbols: Func in log(exp(z)); a proof over C must use only ring ...
    $ python plant.py logexp.py logexp_c.py      # logexp.py: the same with real=True;
                                                 # its record and trace written at logexp_c's key
    $ verigrad verify logexp_c.py                # exit 0
    logexp_c  proved  2  2  cached
    axioms used: log_exp, ring

Stale entry, no planting: ``z = Symbol.z(complex=bool(os.environ.get("VG_COMPLEX")))``;
``verigrad verify f.py`` (proved, stored), then ``VG_COMPLEX=1 verigrad verify f.py``:
"proved (cached)", exit 0, while ``VG_COMPLEX=1 verigrad verify --no-cache f.py`` is
"unproved", exit 1 (the key covers the file's bytes, not what it reads at run time; that is
fine only if a hit re-applies every check the fresh run makes).

Root: ``verigrad/proof/library.py`` (``_replayed``) re-derives only part of the verdict
``verigrad/proof/script.py`` (``_conclude``) gives: the complex-ring check (and a citation
of an unproved theorem, ``ctx.capped``) is not re-applied to the replayed theorems, and
the statement it compares carries no trace of ``complex``.
"""
import json

import pytest

from _verify_files import own_cache, statement, verify
from verigrad.proof import library


def _body(kind):
    """``log(exp(z)) = z`` for a ``kind`` symbol z, by simplifying its left side."""
    return statement("log(exp(z))", "z", kind, "z", steps=["Eq[0].this.lhs.simplify()"])


@pytest.fixture
def files(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    real, cplx = tmp_path / "logexp.py", tmp_path / "logexp_c.py"
    real.write_text(_body("real"))
    cplx.write_text(_body("complex"))
    return real, cplx


def test_rt16_a_fresh_run_refuses_the_complex_file(files):
    real, cplx = files
    assert verify(real).status == "proved"                    # true over the reals
    rec = verify(cplx)
    assert rec.status != "proved" and "complex" in rec.reason


def test_rt16_a_planted_entry_does_not_prove_log_exp_over_c(files):
    real, cplx = files
    good = verify(real)
    assert good.status == "proved" and good.trace is not None
    info = library.file_info(cplx)
    key = library.cache_key(info, {})
    d = library.cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{key}.json").write_text(json.dumps(good.to_json() | {"name": info.name, "file": info.file}))
    (d / f"{key}.trace.json").write_text(json.dumps(good.trace))
    rec = verify(cplx, use_cache=True)
    assert rec.status != "proved", f"log(exp(z)) = z for complex z reported proved (cached={rec.cached})"


def test_rt16_a_stale_entry_does_not_prove_log_exp_over_c(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    path = tmp_path / "logexp_env.py"
    path.write_text("import os\n" + _body("complex").replace(
        "complex=True", 'complex=bool(os.environ.get("VG_RT16_COMPLEX"))'))
    monkeypatch.delenv("VG_RT16_COMPLEX", raising=False)
    assert verify(path, use_cache=True).status == "proved"    # z real: true, stored
    monkeypatch.setenv("VG_RT16_COMPLEX", "1")
    assert verify(path).status != "proved"                    # z complex: a fresh run refuses
    monkeypatch.delenv("VG_RT16_COMPLEX")
    assert verify(path).status == "proved"                    # the real entry stored again
    monkeypatch.setenv("VG_RT16_COMPLEX", "1")
    rec = verify(path, use_cache=True)
    assert rec.status != "proved", f"log(exp(z)) = z for complex z reported proved (cached={rec.cached})"
