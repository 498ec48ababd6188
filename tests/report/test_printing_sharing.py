"""The printer is linear in the term DAG: a term whose tree is exponentially large
(a network statement shares subterms everywhere) prints with its shared subterms
named once (#k) and defined after it; a small term prints inline."""
import re

from verigrad.kernel import Func, Var, refl
from verigrad.report.printing import latex, text


def doubling(depth: int):
    """t_{k+1} = exp(t_k) * t_k + t_k: a DAG of ~3*depth nodes, a tree of ~3^depth."""
    t = Var("x", ())
    for _ in range(depth):
        t = Func("exp", (t,)) * t + t
    return t


def test_a_shared_dag_prints_small_with_names_defined_once():
    t = doubling(40)
    s = text(t)
    assert len(s) < 20_000 and "   where " in s
    used = set(re.findall(r"#(\d+)", s))
    defined = re.findall(r"#(\d+) = ", s)
    assert used == set(defined) and len(defined) == len(set(defined))
    assert "\\#" in latex(t) and len(latex(t)) < 40_000


def test_statements_share_names_across_both_sides():
    t = doubling(30)
    th = refl(t + t)
    s = th.statement()
    head, _, defs = s.partition("   where ")
    assert head.startswith("|- ") and "#" in head and defs


def test_a_small_term_prints_inline():
    x = Var("x", ())
    s = text(Func("exp", (x,)) * x + x)
    assert "#" not in s and "where" not in s and "exp(x)" in s
