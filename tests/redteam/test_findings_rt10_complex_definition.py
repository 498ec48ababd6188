"""Red team RT10-C1 (open): RT-16 again, through defined symbols: a cache hit skips the
complex-ring check when the complex symbol sits in a definition.

A cache hit re-applies the complex-ring check only when the file's goals or givens
mention a complex symbol (``library._replayed``: ``statement_of(..., over_complex=True)``,
i.e. ``mentions_complex`` over the statements), while a fresh run applies it when any fact
of the log does (``script._conclude``: ``has_complex(log)``). A goal ``U = V`` over
``U := log(exp(z))`` and ``V := z``, for a complex ``z``, mentions no complex symbol. So
with ``logexp_real.py`` (the same file with ``real=True``, proved) verified, its record
and trace copied to the key of ``logexp_complex.py`` (the key is a content hash anyone
can compute: ``library.cache_key``)::

    $ verigrad verify --no-cache logexp_complex.py      # exit 1
     logexp_complex  unproved ... complex symbols: Func in log(exp(z)); a proof over C ...
    $ verigrad verify logexp_complex.py                 # exit 0
     logexp_complex  proved      6       4  cached  |- U = V
    axioms used: congruence, definition, log_exp, ring

``U = V`` is false over C (at z = 2 pi i, log(exp(z)) = 0).

RT10-C2 (open), same files, fresh run, no cache: the unproved complex file's steps read
``Eq[4]  proved   log(exp(z)) = z`` in ``verify --steps`` / ``--json`` (the ring check
applies to the goals only; a step is marked proved when the kernel proved it over R).
"""
import shutil

from verigrad.proof import library

from _verify_files import own_cache, verify

BODY = '''
from verigrad.proof import *


@apply
def apply(U, V):
    return Equality(U, V)


@prove
def prove(Eq):
    z = Symbol.z({kind}=True)
    U = Symbol.U(definition=log(exp(z)))
    V = Symbol.V(definition=z)
    Eq << apply(U, V)
    Eq << Eq[-1].this.lhs.definition
    Eq << Eq[-1].this.rhs.definition
    Eq << Eq[-1].this.lhs.simplify()
'''


def _files(tmp_path):
    real, cplx = tmp_path / "logexp_real.py", tmp_path / "logexp_complex.py"
    real.write_text(BODY.format(kind="real"))
    cplx.write_text(BODY.format(kind="complex"))
    return real, cplx


def test_a_real_twins_entry_does_not_prove_a_complex_theorem_over_definitions(tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    real, cplx = _files(tmp_path)
    assert verify(cplx).status == "plausible"                  # fresh: refused over C
    assert verify(real, use_cache=True).status == "proved"     # stored
    by = {i.module: i for i in library.load_library()}
    src, dst = (library.cache_key(library.file_info(p), by) for p in (real, cplx))
    d = library.cache_dir()
    for suffix in (".json", ".trace.json"):
        shutil.copy(d / f"{src}{suffix}", d / f"{dst}{suffix}")
    rec = verify(cplx, use_cache=True)
    assert rec.status != "proved", (rec.status, rec.statement, rec.cached)


def test_an_unproved_complex_files_steps_do_not_read_proved_over_the_reals(tmp_path):
    _, cplx = _files(tmp_path)
    rec = verify(cplx)
    assert rec.status == "plausible"
    shown = [s.statement for s in rec.steps if s.status == "proved"]
    assert "log(exp(z)) = z" not in shown, shown
