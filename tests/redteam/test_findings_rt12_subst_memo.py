"""Red team RT12-D (helper rt12; fixed 2026-12-03): ``Poly.subst`` memoizes its result under a key made
from ``mapping.items()``, but computes it with ``s in mapping`` and ``mapping[s]``. A
``dict`` subclass can report one substitution and hold another:

    class Report(dict):
        def items(self): return [(k, 1)]               # says k := 1
    (n - k).subst(Report({n: 5}))                      # does n := 5: 5 - k, memoized as k := 1

After that, the kernel's own ``(n - k).subst({k: 1})`` (in ``instantiate``) answers
``5 - k``:

    th = prove_equal(IntVal(n - k), IntVal(n) - IntVal(k))    # true
    instantiate(th, {k: 1})                                    # |- 5 - k = n - 1

false at n = 3, k = 1 (4 against 2), and ``k`` was supposed to be gone. ``Poly.subst`` is a
public method of the public ``Poly``. (``verigrad check`` refuses the trace.)

Expected fix: read ``mapping`` once into a plain dict of checked entries (``IntSym``
keys, ``as_poly`` values) and compute and key the memo from that one copy.
"""
from verigrad.certify import witness as W
from verigrad.certify.evaluate import evaluate
from verigrad.kernel import IntVal, KernelError, SizeSym, Theorem, instantiate, prove_equal


class Report(dict):
    """Reports k := 1 whatever it holds."""
    k = None

    def items(self):
        return [(Report.k, 1)]


def test_a_mapping_that_reports_another_substitution_does_not_poison_the_memo():
    n, k = SizeSym("n_rt12d"), SizeSym("k_rt12d")
    p = n - k
    th = prove_equal(IntVal(p), IntVal(n) - IntVal(k))
    assert isinstance(th, Theorem)
    Report.k = k
    try:
        p.subst(Report({n: 5}))
    except KernelError:
        pass
    assert p.subst({k: 1}) is n - 1, f"(n - k)[k := 1] is {p.subst({k: 1})}"
    with W.paused():
        th2 = instantiate(th, {k: 1})
    sizes = {n: 3, k: 1}
    assert float(evaluate(th2.lhs, sizes, {})) == float(evaluate(th2.rhs, sizes, {})), \
        f"false theorem: {th2.lhs!r} = {th2.rhs!r}"
