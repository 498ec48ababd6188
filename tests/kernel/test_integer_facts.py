"""Integer data (the fact ``integer``): comparisons are decided exactly, never excused as
kinks (issue 11, case 1: an off-by-one mask against an integer length)."""
import pytest

from verigrad.kernel import (Deriv, IndexVar, IntVal, KernelError, Lamda, Num, RealCond, SizeSym, Theorem, Var,
                             instantiate, prove_equal, vjp_statement)

m = SizeSym("m")
i = IndexVar("i", m)
length = Var("len", (), ("integer",))
x, dy = Var("x", (m,)), Var("dy", (m,))


def test_strict_and_weak_masks_differ_on_integers():
    lt = RealCond(IntVal(i) - length, "<")
    le = RealCond(IntVal(i) - length, "<=")
    res = prove_equal(lt, le)
    assert not isinstance(res, Theorem), "i < len and i <= len differ where i == len"


def test_integer_comparisons_are_exact():
    assert isinstance(prove_equal(RealCond(IntVal(i) - length, "<"), RealCond(IntVal(i) - length + 1, "<=")), Theorem)
    assert isinstance(prove_equal(RealCond(2 * length - 1, ">="), RealCond(length, ">")), Theorem)
    th = prove_equal(RealCond(length - IntVal(i), ">") + RealCond(IntVal(i) - length, ">="), Num(1))
    assert isinstance(th, Theorem) and not th.conds


def test_off_by_one_mask_backward_is_not_proved():
    fwd = Lamda([i], RealCond(IntVal(i) - length, "<") * x[i])
    wrong = Lamda([i], RealCond(IntVal(i) - length, "<=") * dy[i])
    right = Lamda([i], RealCond(IntVal(i) - length, "<") * dy[i])
    assert not isinstance(prove_equal(wrong, vjp_statement(fwd, x, dy)), Theorem)
    th = prove_equal(right, vjp_statement(fwd, x, dy))
    assert isinstance(th, Theorem) and not th.conds


def test_no_derivative_with_respect_to_integer_data():
    with pytest.raises(KernelError, match="integer"):
        Deriv(length * 2, length, ())


def test_instantiating_integer_data_needs_an_integer_term():
    th = prove_equal(length + 0, length)
    assert isinstance(instantiate(th, {length: Var("k", (), ("integer",)) + 1}), Theorem)
    with pytest.raises(KernelError, match="integer"):
        instantiate(th, {length: Var("r", ())})
