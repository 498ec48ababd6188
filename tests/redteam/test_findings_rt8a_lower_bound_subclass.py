"""Red team RT8A-1 (helper rt8a; open): a size symbol's lower bound is checked with
``isinstance(lower, int) and not lower < 1``, so an ``int`` subclass whose ``__lt__``
lies passes the check while its value is 0:

    class Zero(int):
        def __lt__(self, other): return False
    n = SizeSym("n", Zero(0))        # accepted; n.lower == 0

The rest of the kernel then disagrees about n's range. The arithmetic oracle shifts n
to its lower bound by value (``n = 0 + t``), so it reads n >= 0, while the normal form's
``IntA`` marks every size symbol positive. The kernel proves, with no condition:

    |- [n > 0] = 1        and        |- n / n = 1

Both are false at n = 0, a value the symbol's own bound (0) admits: [0 > 0] = 0 and, by the
kernel's total convention, 0 * 0^-1 = 0. Only public API is used (no monkeypatching, no
``object.__setattr__``, no private name); the subclass is a value handed to a public
constructor. (The kernel's docstring counts in-process hostility as out of scope, since a
replay of the trace in a fresh process would read the bound as a plain 0 and refuse it;
but the in-process ``Theorem`` object, which tests and tactics trust, is false.)

Expected fix: read the bound as an exact ``int`` (``type(lower) is int``, or
``int(lower)`` before the comparison), as ``Choices`` already does for its
positions.
"""
import numpy as np

from verigrad.certify import witness as W
from verigrad.certify.evaluate import evaluate
from verigrad.kernel import (IntVal, KernelError, Num, Pow, RealCond, SizeSym, Theorem, prove_equal)


class Zero(int):
    """0, claiming not to be below anything."""

    def __lt__(self, other):
        return False


def _statements(n):
    return [(RealCond(IntVal(n), ">"), Num(1)), (IntVal(n) * Pow(IntVal(n), -1), Num(1))]


def test_the_statements_are_false_at_zero():
    n = SizeSym("n_rt8a_honest")          # the same statements, evaluated at n = 0
    for lhs, rhs in _statements(n):
        assert float(np.asarray(evaluate(lhs, {n: 0}, {}))) == 0.0
        assert float(np.asarray(evaluate(rhs, {n: 0}, {}))) == 1.0


def test_a_lower_bound_that_lies_is_refused():
    try:
        n = SizeSym("n_rt8a", Zero(0))
    except KernelError:
        return                              # refused: fixed
    assert int(n.lower) == 0                # the bound the oracle uses is 0 ...
    for lhs, rhs in _statements(n):
        with W.paused():                    # (the suite's witness check sees it false at n = 0 too)
            res = prove_equal(lhs, rhs)
        # ... so nothing may be proved that needs n >= 1
        assert not (isinstance(res, Theorem) and not res.conds), \
            f"false theorem for a size with lower bound 0: {res}"
