"""The proof language: symbols, facts, citations and what caps a theorem's status."""
import importlib
import sys
import textwrap

import pytest

from verigrad.kernel import Theorem
from verigrad.proof import ProofError, Range, Symbol, oo, script
from verigrad.proof.expressions import IntSymbol, TensorSymbol

HEADER = "from verigrad.proof import *\n"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """``package({name: source}) -> run(name)``: theorem modules that may cite each other."""
    monkeypatch.syspath_prepend(str(tmp_path))
    created = []

    def make(files: dict):
        pkg = f"vgpkg{len(created)}_{id(tmp_path) % 10000}"
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
        for name, src in files.items():
            (tmp_path / pkg / f"{name}.py").write_text(textwrap.dedent(src).replace("PKG", pkg))
        created.append(pkg)
        importlib.invalidate_caches()
        return lambda name: script.run_proof(f"{pkg}.{name}")
    yield make
    script.forget()
    for pkg in created:
        for m in [m for m in sys.modules if m == pkg or m.startswith(pkg + ".")]:
            del sys.modules[m]


def test_symbols_sizes_indices_and_names_from_the_line():
    n = Symbol(domain=Range(2, oo))
    assert isinstance(n, IntSymbol) and n.name == "n" and n.sym.lower == 2
    i = Symbol.i(integer=True, domain=[0, n - 1])          # closed: 0 <= i <= n - 1
    assert i.size is n.poly
    r = Symbol.r(integer=True, domain=Range(0, n))         # half open: the same range
    assert r.size is n.poly
    W = Symbol("W^Q", shape=(n, n), real=True)
    assert isinstance(W, TensorSymbol) and W.term.name == "W^Q"
    k = Symbol.k(integer=True)                              # no domain: resolved by use
    assert W[k, i].shape == () and k.size is n.poly
    with pytest.raises(ProofError, match="without a name"):
        [Symbol(domain=Range(1, oo))]


SHIFT = HEADER + """
@apply
def apply(x, c):
    return Equality(softmax(x + c), softmax(x))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    c = Symbol.c(real=True)
    Eq << apply(x, c)
    Eq << Eq[0].this.lhs.definition
"""

CITER = HEADER + """
from PKG import shift


@apply
def apply(y):
    return Equality(softmax(y - 3), softmax(y))


@prove
def prove(Eq):
    m = Symbol.m(domain=[2, oo], integer=True)
    y = Symbol.y(shape=(m,), real=True)
    Eq << apply(y)
    Eq << shift.apply(y, -3)
"""


def test_a_citation_instantiates_the_cited_kernel_theorem(package):
    run = package({"shift": SHIFT, "citer": CITER})
    res = run("citer")
    assert res.status == "proved", res.reason
    cited = res.log[1]
    assert cited.rule.startswith("cite") and isinstance(cited.theorem, Theorem)
    assert cited.theorem.rule in ("instantiate", "trans")
    assert any(m.endswith(".shift") for m in res.cites)


def test_citing_an_unproved_theorem_caps_the_citer_at_plausible(package):
    broken = SHIFT.replace("Eq << Eq[0].this.lhs.definition", "Eq << Eq[0].this.lhs.arg.args[0].definition")
    run = package({"shift": broken, "citer": CITER})
    assert run("shift").status == "failed"
    res = run("citer")
    assert res.status == "plausible"
    assert "cites" in res.reason and "which is failed" in res.reason
    assert "which is failed" in res.log[1].note      # the citation itself proves nothing


def test_a_citation_cycle_proves_nothing(package):
    a = HEADER + """
from PKG import b


@apply
def apply(x):
    return Equality(x + 0, x)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << b.apply(x)
"""
    run = package({"a": a, "b": a.replace("from PKG import b", "from PKG import a").replace("b.apply", "a.apply")})
    res = run("a")
    assert res.status == "plausible" and "cycle" in res.reason


def test_complex_symbols_are_accepted_only_for_ring_proofs(package):
    ring = HEADER + """
@apply
def apply(W):
    return Equality(W.T.T, W)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    W = Symbol.W(shape=(n, n), complex=True)
    Eq << apply(W)
"""
    exp_ = ring.replace("Equality(W.T.T, W)", "Equality(exp(W) * exp(-W), OneMatrix(*W.shape))")
    run = package({"ring": ring, "exp": exp_})
    assert run("ring").status == "proved"
    res = run("exp")
    assert res.status == "plausible" and "ring operations" in res.reason


def test_a_pending_goal_is_proved_through_a_chain_of_equivalent_steps(package):
    src = HEADER + """
@apply
def apply(x):
    n = x.shape[0]
    j = Symbol.j(integer=True)
    return Equality(Sum[j:n](2 * x[j]), 2 * Sum[j:n](x[j]))


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    Eq << apply(x)
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq.inside = Eq[0].this.rhs.become(Sum[j:n](2 * x[j]))
    Eq << Eq.inside.reversed
"""
    run = package({"t": src})
    res = run("t")
    assert res.status == "proved", res.reason
    assert res.log.inside.proved and res.log.inside.rule == "become" and res.log.inside.index is None
    assert res.log[1].inputs == (res.log.inside,)
    assert (res.goals[0].theorem.lhs, res.goals[0].theorem.rhs) == res.goals[0].pair


def test_a_wrong_elementwise_step_cannot_be_abstracted_into_a_proof(package):
    src = HEADER + """
@apply
def apply(A):
    return Equality(A.T.T, A)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    A = Symbol.A(shape=(n, n), real=True)
    Eq << apply(A)
    i = Symbol.i(integer=True, domain=[0, n - 1])
    j = Symbol.j(integer=True, domain=[0, n - 1])
    Eq << Eq[0][i, j]
    Eq << Eq[-1].this.rhs.become(A[j, i])
"""
    res = package({"t": src})("t")
    assert res.status == "failed" and "cannot show" in res.reason


def test_unknown_tactics_and_missing_apply_are_errors_with_a_line(package):
    src = HEADER + """
@apply
def apply(x):
    return Equality(x, x)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.frobnicate()
"""
    res = package({"t": src, "u": HEADER + "\n@prove\ndef prove(Eq):\n    pass\n"})
    r = res("t")
    assert r.status == "failed" and "unknown tactic" in r.reason and r.line == 12
    assert res("u").status == "failed" and "@apply" in res("u").reason


def test_a_theorem_with_a_hypothesis_rests_on_it_and_on_nothing_else(package):
    src = HEADER + """
@apply
def apply(given):
    x, y = given.lhs, given.rhs
    return Equality(2 * x + 1, 2 * y + 1)


@prove
def prove(Eq):
    n = Symbol.n(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(n,), real=True)
    y = Symbol.y(shape=(n,), real=True)
    Eq << apply(Equality(x, y))
    Eq << Eq[1].subs(Eq[0])
"""
    res = package({"t": src})("t")
    assert res.status == "proved", res.reason
    (th,) = res.theorems
    assert len(th.hyps) == 1 and res.log[0].kind == "given"
    unjustified = src.replace("Eq << Eq[1].subs(Eq[0])", "Eq << Eq[1].this.lhs.become(2 * y + 1)")
    res = package({"t": unjustified})("t")
    assert res.status == "failed" and "cannot show" in res.reason


def test_rewriting_at_a_path_with_a_cited_theorem(package):
    user = HEADER + """
from PKG import shift


@apply
def apply(y):
    return Equality(softmax(y + 3) * 2, softmax(y) * 2)


@prove
def prove(Eq):
    m = Symbol.m(domain=[2, oo], integer=True)
    y = Symbol.y(shape=(m,), real=True)
    Eq << apply(y)
    Eq << Eq[0].this.lhs.args[1].apply(shift)
"""
    run = package({"shift": SHIFT, "user": user})
    res = run("user")
    assert res.status == "proved", res.reason
    step = res.log[1]
    assert step.rule == "apply" and str(step.statement) == "2*softmax(y) = 2*softmax(y)"
    run = package({"shift": SHIFT, "user": user.replace(".apply(shift)", ".apply(shift.apply)")})
    assert run("user").status == "proved"
    run = package({"shift": SHIFT, "user": user.replace(".apply(shift)", ".apply(softmax)")})
    res = run("user")
    assert res.status == "failed" and "is not a theorem" in res.reason and res.line == 16


def test_citing_a_theorem_with_a_hypothesis_is_capped_until_the_kernel_can_cut(package):
    given = HEADER + """
@apply
def apply(given):
    return Equality(given.lhs + 1, given.rhs + 1)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    y = Symbol.y(real=True)
    Eq << apply(Equality(x, y))
    Eq << Eq[-1].subs(Eq[0])
"""
    user = HEADER + """
from PKG import plus_one


@apply
def apply(a):
    return Equality(a * 2 + 1, a + a + 1)


@prove
def prove(Eq):
    a = Symbol.a(real=True)
    Eq << apply(a)
    Eq << Equality(a * 2, a + a)
    Eq << plus_one.apply(Eq[-1])
"""
    run = package({"plus_one": given, "user": user})
    assert run("plus_one").status == "proved"
    res = run("user")
    cited = res.log[2]
    assert cited.theorem is not None and cited.theorem.hyps
    assert "cut rule" in cited.note and "Eq[1] proves" in cited.note
    assert res.status == "plausible" and "cut rule" in res.reason
