"""Red team RT12-C (helper rt12; fixed 2026-12-03): ``Poly.__new__`` memoizes on the monomial keys it
is given before checking them. ``_canonical`` maps each key as given to its canonical
spelling, and ``_poly_cache`` maps ``frozenset(terms.items())`` to the result; both are
dict lookups, which compare by ``==``. A key object that hashes as the tuple
``((n, 1), (n, 1))`` (what arithmetic makes for ``n * n`` before canonical spelling),
equals anything, and iterates as ``((n, 1),)`` is checked by ``_canonical_mono`` (it
iterates as a valid monomial) and stored: from then on the kernel reads every ``n * n``
it multiplies out as ``n``.

The arithmetic oracle multiplies out when it shifts a size to its lower bound:
``nonneg(3n - n^2 - 2)`` becomes ``3(t+1) - (t+1)(t+1) - 2`` with ``t*t`` read as ``t``,
i.e. 0, "proved >= 0". Then ``instantiate`` accepts ``m := 3n - n^2 - 1`` for a size
``m >= 1``:

    Poly({H(): 1})                                   # the poison
    th = prove_equal(IntCond(m, ">=", 1), Num(1))    # |- [m >= 1] = 1 (true)
    instantiate(th, {m: 3n - n^2 - 1})               # |- [3n - n^2 - 1 >= 1] = 1

false at n = 3 (3*3 - 9 - 1 = -1). The statement's own polynomial is spelled canonically
(``Poly({((n, 2),): -1, ...})``), so it is printed right; only the oracle's work is wrong.
(``verigrad check`` refuses the trace: a fresh process has no poison.)

Expected fix: check every monomial key before any cache is consulted or filled: an
exact ``tuple`` of exact 2-tuples ``(IntSym, int)`` (``type(m) is tuple``,
``type(pair) is tuple``, ``type(k) is int``); the same for ``Poly.sym``/``Poly.const``
arguments (an ``IntSym`` / exact ``int``) before their tables.
"""
import numpy as np

from verigrad.certify import witness as W
from verigrad.certify.evaluate import evaluate
from verigrad.kernel import (IntCond, KernelError, Num, Poly, SizeSym, Theorem, instantiate, nonneg,
                             prove_equal)


def test_a_monomial_key_that_lies_does_not_poison_the_oracle():
    n, m = SizeSym("n_rt12c"), SizeSym("m_rt12c")
    v = Poly({((n, 1),): 3, ((n, 2),): -1, (): -1})      # 3n - n^2 - 1, spelled canonically
    raw = ((n, 1), (n, 1))                              # n*n as arithmetic spells it first

    class H:
        def __hash__(self):
            return hash(raw)

        def __eq__(self, other):
            return True

        def __iter__(self):
            return iter(((n, 1),))

    try:
        Poly({H(): 1})
    except KernelError:
        pass                                            # refused: fine
    assert float(evaluate(IntCond(v, ">=", 1), {n: 3}, {})) == 0.0    # the claim below is false at n = 3
    assert not nonneg(v - 1), "the oracle proves 3n - n^2 - 2 >= 0 (false at n = 3)"
    th = prove_equal(IntCond(m, ">=", 1), Num(1))
    assert isinstance(th, Theorem)
    try:
        with W.paused():
            th2 = instantiate(th, {m: v})
    except KernelError:
        return
    raise AssertionError(f"false theorem: {th2.lhs!r} = {th2.rhs!r}")
