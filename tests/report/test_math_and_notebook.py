"""MathML from the printer's LaTeX, and notebook display of theorems, statements,
proof records and certificates."""
import re

import pytest

from verigrad.certify.certificate import Certificate, Counterexample
from verigrad.kernel import IndexVar, Lamda, SizeSym, Sum, Theorem, Var, prove_equal
from verigrad.report.mathml import mathml, term_html
from verigrad.report.markup import Raw, h
from verigrad.report.printing import latex

n, m = SizeSym("n"), SizeSym("m")


def mi(markup):
    """The identifiers of a MathML fragment."""
    return re.findall(r"<mi[^>]*>([^<]*)</mi>", markup)


def trace_swap():
    """sum_i sum_j A[i,j] B[j,i] = sum_j sum_i B[j,i] A[i,j] (the trace of AB is that of BA)."""
    A, B = Var("A", (n, m)), Var("B", (m, n))
    i, j = IndexVar("i", n), IndexVar("j", m)
    return Sum(i, Sum(j, A[i, j] * B[j, i])), Sum(j, Sum(i, B[j, i] * A[i, j]))


def test_mathml_of_a_statement_has_its_symbols_and_carries_the_latex():
    th = prove_equal(*trace_swap())
    assert isinstance(th, Theorem)
    out = mathml(th.latex(), display=True)
    assert out.startswith("<math") and 'display="block"' in out
    assert {"A", "B", "i", "j"} <= set(mi(out)) and "&#x02211;" in out     # the sums
    assert f'alttext="{th.latex()}"' in out.replace("&#x27;", "'")


def test_an_entry_of_a_comprehension_is_valid_latex():
    """``Lamda[i](...)[k]`` is ``{[...]_{i<n}}_{k}``, not a double subscript."""
    x = Var("x", (n,))
    i, k = IndexVar("i", n), IndexVar("k", n)
    t = Lamda([i], x[i] * x[i])[k]
    assert latex(t).startswith("{") and "_{k}" in latex(t)
    assert 'class="tex"' not in term_html(t)


def test_latex_that_cannot_be_converted_is_shown_as_source_not_dropped():
    out = mathml(r"x_{1}_{2}")
    assert out.startswith('<code class="tex"') and "x_{1}_{2}" in out


def test_indicator_renders_as_a_character_browsers_have():
    assert "\U0001D7D9" in mathml(r"\mathbb{1}\left[i < n\right]")


def test_markup_escapes_text_but_keeps_raw():
    out = h("p", "<b>&", Raw("<i>ok</i>"), title='"q"')
    assert out == '<p title="&quot;q&quot;">&lt;b&gt;&amp;<i>ok</i></p>'


# -- notebooks ------------------------------------------------------------------------------------------

def test_theorem_displays_as_mathml_with_its_axioms():
    th = prove_equal(*trace_swap())
    html = th._repr_html_()
    assert "<math" in html and {"A", "B"} <= set(mi(html))
    assert f"rests on {len(th.axioms())} axiom" in html
    assert th._repr_latex_().startswith("$\\vdash")


def test_certificates_display_their_status_never_better():
    th = prove_equal(*trace_swap())
    good = Certificate("trace", "PROVED", th.statement(), theorem=th, axioms=th.axioms())
    html = good._repr_html_()
    assert "<math" in html and ">PROVED<" in html and "#1f7a3a" in html
    cex = Counterexample({"n": 2}, "dx", (0,), 1.0, 2.0, 7)
    bad = Certificate("relu dx", "REFUTED", counterexample=cex)
    html = bad._repr_html_()
    assert ">REFUTED<" in html and "counterexample: at n=2" in html and "#1f7a3a" not in html
    assert bad._repr_latex_() is None
    unknown = Certificate("mystery", "UNKNOWN", detail="the importer cannot take it")
    html = unknown._repr_html_()
    assert ">UNKNOWN<" in html and "#1f7a3a" not in html and "the importer cannot take it" in html


def test_proof_records_steps_statements_and_facts_display_as_math():
    from verigrad.proof import verify_theorem
    rec = verify_theorem("softmax.sums_to_one")
    html = rec._repr_html_()
    assert "softmax.sums_to_one" in html and ">proved<" in html and "<math" in html
    assert rec._repr_latex_() == "$" + rec.latex + "$"
    step = rec.steps[-1]
    assert "<math" in step._repr_html_() and step._repr_latex_() == "$" + step.latex + "$"


def test_a_proof_language_statement_displays_its_kernel_equation():
    from verigrad.proof import Equality, Sum as PSum, Symbol, exp, oo
    k = Symbol.k(domain=[1, oo], integer=True)
    x = Symbol.x(shape=(k,), real=True)
    j = Symbol.j(integer=True)
    st = Equality(PSum[j:k](exp(x[j])), PSum[j:k](exp(x[j])))
    assert "<math" in st._repr_html_() and st._repr_latex_().startswith("$")
    assert "x" in mi(st._repr_html_())


@pytest.mark.parametrize("status", ["plausible", "failed"])
def test_an_unproved_record_is_not_green(status):
    from verigrad.proof import TheoremRecord
    rec = TheoremRecord("area.claim", "area", "claim.py", status, reason="the goal is not reached", line=3)
    html = rec._repr_html_()
    assert f">{status}<" in html and "#1f7a3a" not in html and "line 3: the goal is not reached" in html


def test_a_certificate_record_of_a_layer_displays_its_facts():
    from verigrad.report.notebook import certificate_record_html
    rec = {"kind": "layer", "name": "relu", "status": "PROVED", "wrt": {"x@relu": "PROVED"}, "axioms": ["ring"],
           "sizes": ["B", "d"], "float32_error": 1.5e-8, "latex": r"\vdash \mathrm{dx}_{i} = \mathrm{dy}_{i}"}
    html = certificate_record_html(rec)
    assert "<math" in html and ">PROVED<" in html and "float32 error 1.5e-08" in html and "sizes B d" in html
    unknown = certificate_record_html(dict(rec, status="UNKNOWN", wrt={"x@relu": "UNKNOWN"}, latex="",
                                           detail="x@relu: no theorem"))
    assert "#1f7a3a" not in unknown and "<math" not in unknown and "x@relu: no theorem" in unknown
