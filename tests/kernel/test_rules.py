"""The LCF rules: only the kernel makes theorems, and every rule checks its domain."""
import pytest

from verigrad.kernel import (AXIOMS, At, Deriv, FnLam, Vjp, at_elim, Func, IndexVar, KernelError, Lamda, Num, SizeSym, Sum, TensorFn,
                             Theorem, Var, abstract, assume, define, index, instantiate, prove_equal, refl, rewrite,
                             symm, trans, vjp_statement)
from verigrad.kernel.theorem import Failure

n, d = SizeSym("n"), SizeSym("d")
x, y = Var("x", (n,)), Var("y", (n,))
i, j = IndexVar("i", n), IndexVar("j", n)


def test_theorems_cannot_be_forged():
    with pytest.raises(KernelError, match="only by the kernel"):
        Theorem(object(), (), (), x, x, "forged")
    th = refl(x)
    with pytest.raises(AttributeError):
        th.rhs = y


def test_refl_symm_trans():
    a = prove_equal(Sum(i, x[i] + y[i]), Sum(i, x[i]) + Sum(j, y[j]))
    b = prove_equal(Sum(i, x[i]) + Sum(j, y[j]), Sum(j, y[j]) + Sum(i, x[i]))
    c = trans(a, b)
    assert c.lhs is a.lhs and c.rhs is b.rhs
    assert symm(c).lhs is c.rhs
    with pytest.raises(KernelError, match="trans"):
        trans(a, a)


def test_every_axiom_is_registered_and_justified():
    th = prove_equal(Sum(i, Func("exp", (x[i] + y[i],))), Sum(j, Func("exp", (x[j],)) * Func("exp", (y[j],))))
    assert isinstance(th, Theorem)
    assert "exp_add" in th.axioms()
    for name in th.axioms():
        assert AXIOMS[name].why


def test_axioms_are_listed_transitively():
    a = prove_equal(Func("exp", (Num(0),)), Num(1))
    b = prove_equal(Func("log", (Func("exp", (Var("s", ()),)),)), Var("s", ()))
    assert "log_exp" in b.axioms()
    c = trans(symm(symm(b)), refl(b.rhs))
    assert set(b.axioms()) <= set(c.axioms())
    _ = a


def test_instantiate_checks_domains():
    k = SizeSym("k", 2)
    z = Var("z", (k,))
    th = prove_equal(Sum(IndexVar("i", k), z[IndexVar("i", k)]), Sum(IndexVar("j", k), z[IndexVar("j", k)]))
    assert isinstance(instantiate(th, {k: n + 1}), Theorem)
    with pytest.raises(KernelError, match="not provably >= 2"):
        instantiate(th, {k: n})
    eps = Var("eps", (), ("positive",))
    th2 = prove_equal((eps ** 2) ** Num(1) * eps ** -2, Num(1))
    assert isinstance(th2, Theorem)
    with pytest.raises(KernelError, match="must be positive"):
        instantiate(th2, {eps: Var("t", ())})
    inst = instantiate(th2, {eps: Func("exp", (Var("t", ()),))})
    assert inst.lhs.atoms == {Var("t", ())}


def test_instantiate_cannot_change_what_a_derivative_differentiates():
    s, t = Var("s", ()), Var("t", ())
    th = prove_equal(Deriv(s * t, s), t)
    assert isinstance(th, Theorem)
    with pytest.raises(KernelError, match="would make it depend on s"):
        instantiate(th, {t: s})
    with pytest.raises(KernelError, match="already occurs"):
        instantiate(th, {s: t})


def test_abstract_and_index_are_extensionality():
    th = prove_equal(x[i] * 2, x[i] + x[i])
    lam = abstract(th, [i])
    assert isinstance(lam.lhs, Lamda)
    back = index(lam, [j])
    assert back.lhs.shape == ()
    with pytest.raises(KernelError, match="occurs in a hypothesis"):
        abstract(assume(x[i], y[i]), [i])


def test_define_and_prove_with_a_hypothesis():
    S, defn = define("S", Sum(i, x[i]))
    assert defn.lhs is S and defn.rhs is S.body
    h = assume(Var("u", ()), Sum(i, x[i]))
    th = prove_equal(Var("u", ()) * 2, Sum(i, x[i]) + S, using=[h])
    assert isinstance(th, Theorem) and th.hyps == h.hyps


def test_rewrite_is_congruence():
    th = prove_equal(x[i] + x[i], 2 * x[i])
    target = Sum(j, y[j]) * (x[i] + x[i])
    r = rewrite(th, target)
    assert r.lhs is target and "2*x[i]" in repr(r.rhs)
    # An occurrence under a binder of its free index is not rewritten (it means
    # something else there), so nothing is found:
    with pytest.raises(KernelError, match="does not occur"):
        rewrite(th, Sum(i, x[i] + x[i]))


def test_residual_over_an_opaque_branch_with_a_declared_vjp():
    f = TensorFn("f", [(n,)], (n,))
    dy = Var("dy", (n,))
    k = IndexVar("k", n)
    fwd = Lamda([k], x[k] + f(x)[k])                   # residual x + f(x)
    assert isinstance(prove_equal(Lamda([k], dy[k] + Vjp(f, 0, (x,), dy)[k]), vjp_statement(fwd, x, dy)), Theorem)
    wrong = Vjp(f, 0, (x,), dy)                          # the skip dropped
    assert isinstance(prove_equal(wrong, vjp_statement(fwd, x, dy)), Failure)


def test_composition_by_construction():
    """Prove the residual rule once for an opaque branch, then instantiate it with a
    concrete branch and its certified backward, by rules only (no re-normalization)."""
    f = TensorFn("f", [(n,)], (n,))
    dy, k = Var("dy", (n,)), IndexVar("k", n)
    rule = prove_equal(Lamda([k], dy[k] + Vjp(f, 0, (x,), dy)[k]),
                       vjp_statement(Lamda([k], x[k] + f(x)[k]), x, dy))
    # A concrete branch p -> tanh(p) with its certified backward at (p, c).
    p, c = Var("p", (n,)), Var("c", (n,))
    F = Lamda([k], Func("tanh", (p[k],)))
    B = Lamda([k], c[k] * (1 - Func("tanh", (p[k],)) ** 2))
    layer = prove_equal(B, vjp_statement(F, p, c))
    assert isinstance(layer, Theorem)
    inst = instantiate(rule, {f: FnLam([p], F, cot=c)})
    assert any(cd.kind == "smooth" for cd in inst.conds)
    at = inst.lhs.body.terms[1].base                     # At(vjp_statement(F, p, c), (p, c), (x, dy))
    assert isinstance(at, At)
    assert at.body is layer.rhs                          # the layer's VJP statement, at the point
    inside = rewrite(symm(layer), inst.lhs)             # replace vjp_statement(F, p, c) by B under the At
    elim = at_elim(inside.rhs.body.terms[1].base)        # At(B, (p, c), (x, dy)) = B[p := x, c := dy]
    assert "tanh(x[k])" in repr(elim.rhs)
    final = trans(symm(inside), inst)
    assert final.rhs is inst.rhs and isinstance(final, Theorem)
    # The numeric meaning agrees (finite differences, independent of the kernel).
    from verigrad.certify.evaluate import max_difference
    assert max_difference(final.lhs, final.rhs, {n: 3}) < 1e-6


def test_at_elim_refuses_to_substitute_a_differentiated_param():
    p = Var("p", (n,))
    t = At(Deriv(Func("exp", (p[i],)), p, (i,)), (p,), (x + y,))
    with pytest.raises(KernelError, match="variable of a derivative"):
        at_elim(t)


def test_prove_equal_reports_why_it_failed():
    res = prove_equal(Sum(i, x[i]), Sum(i, y[i]))
    assert isinstance(res, Failure)
    assert "normal forms differ" in str(res) and "residual" in str(res)
    res = prove_equal(x, Var("w", (d,)))
    assert isinstance(res, Failure) and "different shapes" in str(res)


def test_instantiate_renames_a_binder_the_substituted_index_would_be_captured_by():
    # |- sum_j X[i, j] delta(i, j) = X[i, i]; i := j must rename the bound j, not give
    # the false |- sum_j X[j, j] delta(j, j) = X[j, j].
    from verigrad.kernel import Delta
    X = Var("X", (n, n))
    th = prove_equal(Sum(j, X[i, j] * Delta(i, j)), X[i, i])
    assert isinstance(th, Theorem)
    inst = instantiate(th, {i: j})
    assert inst.rhs is X[j, j]
    assert inst.lhs.idx is not j and j in inst.lhs.free_idx
    assert isinstance(prove_equal(inst.lhs, inst.rhs), Theorem)
    assert isinstance(prove_equal(Sum(j, X[j, j] * Delta(j, j)), X[j, j]), Failure)


def test_a_work_budget_stops_a_decision_deterministically():
    from verigrad.kernel import Failure
    big = (x[i] + y[i] + 1) ** 6
    full = prove_equal(big, big * Num(1))
    assert isinstance(full, Theorem)
    stopped = prove_equal(big, big * Num(1), budget=20)
    assert isinstance(stopped, Failure) and "budget" in stopped.reason
    assert isinstance(prove_equal(big, big * Num(1), budget=10 ** 6), Theorem)
