"""Red team RT12-B (helper rt12; fixed 2026-12-03): ``Term.__new__``'s fast path (``terms._raw``)
remembers each term under the *raw* arguments it was called with, before ``_canon``
read them, and later finds it by ``==``. An argument object that hashes as ``(0,)``,
equals anything and iterates as ``(1,)`` is read by ``Index._canon`` as the index 1, and
the term ``x[1]`` is stored under the key ``(Index, (x, <that object>), ())``. From then
on, every ``Index(x, (0,))`` the kernel builds (a dict lookup compares the stored key
with the new one, and the object says equal) is ``x[1]``:

    th = prove_equal(x * 1, x)                 # |- x*1 = x, x of shape (n,)
    Index(x, Idx())                            # Idx: hash((Poly 0,)), == anything, iter (1,)
    index(th, (0,))                            # |- (x*1)[0] = x[1]

false for x = (1, 2). Only public names: ``Index`` and ``index`` from
``verigrad.kernel``; the hostile value is an argument. (``verigrad check`` refuses the
written trace, whose fresh process has no poisoned table; the in-process ``Theorem`` is
false.)

Expected fix: take the fast path (and store into ``_raw``) only when the raw arguments
are plain (exact tuples, str, int, Fraction, bool, None and kernel objects: the check
``sizes.plain`` makes of the canonical arguments); any other argument goes through
``_canon`` every time.
"""
import numpy as np

from verigrad.certify import witness as W
from verigrad.certify.evaluate import evaluate
from verigrad.kernel import Index, KernelError, SizeSym, Theorem, Var, as_poly, index, prove_equal
from verigrad.kernel.sizes import ZERO


class Idx:
    """An index tuple that hashes as ``(0,)``, equals anything and iterates as ``(1,)``."""

    def __hash__(self):
        return hash((as_poly(0),))

    def __eq__(self, other):
        return True

    def __iter__(self):
        return iter((1,))


def test_an_index_argument_that_lies_does_not_change_other_terms():
    n = SizeSym("n_rt12b", 2)
    x = Var("x_rt12b", (n,))
    th = prove_equal(x * 1, x)
    assert isinstance(th, Theorem) and th.rhs is x
    try:
        Index(x, Idx())
    except KernelError:
        pass                                    # refusing the object outright is fine too
    honest = Index(x, (0,))
    assert honest.idx == (ZERO,), f"Index(x, (0,)) is {honest!r}: the raw-argument table was poisoned"
    with W.paused():
        th2 = index(th, (0,))
    assert th2.rhs.idx == (ZERO,), f"false theorem: {th2.lhs!r} = {th2.rhs!r}"
    vals = {x: np.array([1.0, 2.0])}
    assert float(evaluate(th2.lhs, {n: 2}, vals)) == float(evaluate(th2.rhs, {n: 2}, vals))
