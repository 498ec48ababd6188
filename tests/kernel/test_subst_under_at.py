"""A substitution under ``At`` uses the indices as they are where the ``At`` stands: an
enclosing binder renamed because its range changed (``instantiate`` n := 2 under
``Lamda[k<n]``) is renamed in the ``At``'s body too. Before, the body kept the old ``k``,
unbound: the soundness fuzz's chain seed 5031320 (at/same) made ``|- Lamda[k<2](At((k*k)^2 p
+ log p, p := 1 + q[k]))[1] = Lamda[k<2]((k*k)^2 (1 + q[k]) + log(1 + q[k]))[1]`` with the
left side reading a free k, false at k = 0."""
from verigrad.kernel import At, Func, IndexVar, IntVal, Lamda, SizeSym, Theorem, Var, abstract, index, instantiate, \
    prove_equal
from verigrad.kernel import terms as T

n = SizeSym("n")
q, p = Var("q", (n,)), Var("p", ())
k, i = IndexVar("k", n), IndexVar("i", n)


def test_a_renamed_binder_is_renamed_in_an_at_body():
    lam = Lamda((k,), At(p * p + IntVal(k), (p,), (q[k],)))
    new = T.subst(lam, {n: 2})
    assert not new.free_idx and new.shape[0].const_value() == 2


def test_the_fuzz_chain_stays_true():
    m = SizeSym("m", 2)
    qm, j = Var("q", (m,)), IndexVar("j", m)
    body = IntVal(j) * IntVal(j)
    th = prove_equal(At(body * body * p + Func("log", (p,)), (p,), (1 + qm[j],)),
                     body * body * (1 + qm[j]) + Func("log", (1 + qm[j],)))
    assert isinstance(th, Theorem)
    at2 = instantiate(index(abstract(th, [j]), (1,)), {m: 2})
    assert not at2.lhs.free_idx and not at2.rhs.free_idx


def test_a_free_index_a_binder_shadows_is_left_alone():
    t = IntVal(i) + T.Sum(i, At(p + IntVal(i), (p,), (q[i],)))
    assert T.subst(t, {i: 0}) is IntVal(0) + T.Sum(i, At(p + IntVal(i), (p,), (q[i],)))
