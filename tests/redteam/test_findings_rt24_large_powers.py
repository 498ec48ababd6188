"""Red team RT24 (2026-12-05, a helper against XLA's constant folder; fixed): a power with
a huge exponent did not finish. ``power(convert(x : i8) : i32, 2147483647)`` is legal
StableHLO; the importer bounded its integer result by ``(-128) ** 2147483647``, exactly,
and ran on without end. The kernel had the same trouble: ``(2 x) ** (2 ** 31)`` computes
the coefficient ``2 ** (2 ** 31)``, and ``(x + y) ** n`` was multiplied out however many
monomials it made.

Fixed: a power's exponent is at most ``MAX_EXPONENT`` (1024) in magnitude (``Pow``; the
importer refuses a larger one by name), and a power of a sum is multiplied out only where
that makes at most 4096 monomials; a larger one stays a power of the sum.
"""
import signal
from contextlib import contextmanager

import pytest

from verigrad.frontends.stablehlo import StableHLOError, import_module
from verigrad.kernel import Deriv, Func, KernelError, Num, Pow, SizeSym, Var, prove_equal
from verigrad.kernel.theorem import Failure, Theorem


@contextmanager
def _finishes_within(seconds):
    """Fail (not hang) where the code under test does not finish."""
    def stop(*_):
        raise TimeoutError(f"did not finish within {seconds} s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _power_of(arg_type, convert, exponent):
    return (f"func.func public @main(%x: tensor<{arg_type}>) -> tensor<i32> {{\n"
            + (f"  %c = stablehlo.convert %x : (tensor<{arg_type}>) -> tensor<i32>\n" if convert else "")
            + f"  %e = stablehlo.constant dense<{exponent}> : tensor<i32>\n"
            + f"  %r = stablehlo.power {'%c' if convert else '%x'}, %e : tensor<i32>\n"
            + "  return %r : tensor<i32>\n}")


def test_a_huge_integer_power_is_refused_at_once():
    with _finishes_within(20), pytest.raises(StableHLOError, match="exponent 2147483647 is too large"):
        import_module(_power_of("i8", True, 2147483647))


def test_a_small_integer_power_still_imports_with_its_bounds():
    with _finishes_within(20):
        imp = import_module(_power_of("i8", True, 3))       # |x| <= 128: x^3 fits int32
    assert len(imp.results) == 1
    with pytest.raises(StableHLOError, match="may leave"):
        import_module(_power_of("i8", True, 5))             # 128^5 = 2^35 does not


n = SizeSym("n")
x, y = Var("x", (n,)), Var("y", (n,))


def test_the_kernel_refuses_a_huge_exponent():
    with pytest.raises(KernelError, match="too large"):
        Pow(x * 2, 2 ** 31)
    Pow(x, Pow.MAX_EXPONENT), Pow(x, -Pow.MAX_EXPONENT)     # the largest allowed


def test_a_large_power_of_a_sum_stays_whole_and_is_still_decided():
    s = x + y + Func("exp", (x,))
    with _finishes_within(60):
        # 3 terms to the 200th: 20,301 monomials, kept as a power of the sum (a product
        # with the sum itself is then distributed, so that is not decided: completeness only)
        assert isinstance(prove_equal(Pow(s, 100) * Pow(s, 100), Pow(s, 200)), Theorem)
        assert isinstance(prove_equal(Pow(s, 100) * Pow(s, 101), Pow(s, 200)), Failure)
        assert isinstance(prove_equal(Pow(s, 200) * 2, Pow(s, 200) + Pow(s, 200)), Theorem)
        assert isinstance(prove_equal(Pow(s, 200) * 2, Pow(s, 200) + Pow(s, 199)), Failure)


def test_a_small_power_of_a_sum_is_still_multiplied_out():
    assert isinstance(prove_equal(Pow(x + 1, 3), x * x * x + 3 * x * x + 3 * x + Num(1)), Theorem)
    assert isinstance(prove_equal(Pow(x + 1, 3), x * x * x + 3 * x * x + 2 * x + Num(1)), Failure)


def test_a_large_power_of_a_sum_is_differentiated_whole():
    t = Var("t", ())
    s = t + Func("exp", (t,)) + 1
    assert isinstance(prove_equal(Deriv(Pow(s, 200), t, ()), 200 * Pow(s, 199) * (1 + Func("exp", (t,)))), Theorem)
    assert isinstance(prove_equal(Deriv(Pow(s, 200), t, ()), 199 * Pow(s, 199) * (1 + Func("exp", (t,)))), Failure)
