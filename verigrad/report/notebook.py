"""Notebook display: what ``_repr_html_`` and ``_repr_latex_`` of theorems, statements,
proof records and certificates return, so Jupyter shows them as math.

HTML carries its own inline styles (a notebook has none of the site's stylesheet) and
MathML, which the browser renders without MathJax. ``_repr_latex_`` is ``$...$`` for
front ends that prefer LaTeX.
"""
from __future__ import annotations

from .markup import TONE, Raw, h, join
from .mathml import mathml

_COLOUR = {"good": "#1f7a3a", "fair": "#16707a", "warn": "#9a6400", "bad": "#b3261e", "none": "#6b7280"}
_CARD = "border:1px solid #d8dee8;border-radius:8px;padding:.5em .9em;margin:.3em 0;font-family:system-ui,sans-serif"
_MUTED = "color:#5b6576;font-size:88%"


def badge(status: str) -> Raw:
    colour = _COLOUR[TONE.get(status, "none")]
    return h("span", status, style=f"background:{colour};color:#fff;border-radius:999px;padding:0 .5em;"
                                   "font-size:80%;font-weight:600")


def _card(*children, status: str | None = None) -> str:
    edge = f";border-left:4px solid {_COLOUR[TONE.get(status, 'none')]}" if status else ""
    return str(h("div", *children, style=_CARD + edge))


def _math(tex: str) -> Raw:
    return h("div", mathml(tex, display=True), style="overflow-x:auto")


def dollars(*parts: str) -> str:
    r"""``$a \quad b$``: LaTeX for a notebook."""
    return "$" + r",\quad ".join(p for p in parts if p) + "$"


# -- kernel theorems ---------------------------------------------------------------------------------

def theorem_html(th) -> str:
    """A kernel ``Theorem``: its statement, side conditions and axioms."""
    axioms = th.axioms()
    conds = sorted(str(c) for c in th.conds)
    return _card(_math(th.latex()),
                 h("div", "where ", join([h("code", c) for c in conds], "; "), style=_MUTED) if conds else None,
                 h("div", f"rests on {len(axioms)} axiom{'s' if len(axioms) != 1 else ''}",
                   ": " if axioms else "", join(axioms), style=_MUTED))


def pair_latex(lhs, rhs) -> str:
    from .printing import equation_latex       # both sides in one display
    return equation_latex(lhs, rhs)


def statement_html(statement) -> str:
    """A proof-language statement (``Equality``, ``Contains``): the kernel equation it means."""
    try:
        tex = pair_latex(*statement.pair())
    except Exception as e:  # noqa: BLE001 - a statement that does not compile is shown as text
        return _card(h("code", str(statement)), h("div", f"does not compile: {e}", style=_MUTED))
    return _card(_math(tex), h("div", h("code", str(statement)), style=_MUTED))


def fact_html(fact) -> str:
    """A fact of a proof log (``Eq[3]``): its statement, how it was obtained, whether proved."""
    status = "proved" if fact.proved else "pending"
    try:
        tex = pair_latex(*fact.pair)
    except Exception:  # noqa: BLE001
        tex = ""
    return _card(h("div", h("b", fact.label), " ", badge(status), " ", h("code", fact.rule), style=_MUTED),
                 _math(tex) if tex else None, h("div", h("code", str(fact)), style=_MUTED), status=status)


# -- proof records ----------------------------------------------------------------------------------------

def _get(rec, name, default=None):
    return rec.get(name, default) if isinstance(rec, dict) else getattr(rec, name, default)


def record_latex(rec) -> str:
    from .library_pages import kernel_statements
    d = rec if isinstance(rec, dict) else rec.to_json()
    return dollars(*kernel_statements(d)) if kernel_statements(d) else dollars(
        *[s["latex"] for s in d.get("steps", []) if s.get("kind") == "goal"])


def record_html(rec) -> str:
    """A ``TheoremRecord`` (or its JSON): name, status, the statement, steps and axioms."""
    from .library_pages import goals, kernel_statements, status_reason
    from .page import first_sentence
    d = rec if isinstance(rec, dict) else rec.to_json()
    parts = kernel_statements(d) or [g["latex"] for g in goals(d) if g.get("latex")]
    steps = sum(s.get("index") is not None for s in d.get("steps", []))
    return _card(h("div", h("b", h("code", d["name"])), " ", badge(d["status"])),
                 h("div", first_sentence(d.get("doc", ""), 300), style=_MUTED) if d.get("doc") else None,
                 *[_math(p) for p in parts],
                 h("div", status_reason(d), style="color:#b3261e") if status_reason(d) else None,
                 h("div", f"{steps} steps; axioms: ", join(d.get("axioms", [])) or "none", style=_MUTED),
                 status=d["status"])


def step_html(step) -> str:
    status = _get(step, "status", "pending")
    uses = _get(step, "uses", [])
    tex = _get(step, "latex", "")
    return _card(h("div", h("b", _get(step, "label")), " ", h("code", _get(step, "rule", "")),
                   f" from {', '.join(uses)}" if uses else "", " ", badge(status) if status != "proved" else None,
                   style=_MUTED),
                 _math(tex) if tex else h("code", _get(step, "statement", "")), status=status)


# -- certificates ------------------------------------------------------------------------------------------

def _wrt(wrt: dict):
    if not wrt:
        return None
    items = [h("span", h("code", v), " ", badge(s if isinstance(s, str) else s.status), style="margin-right:.8em")
             for v, s in wrt.items()]
    return h("div", "with respect to ", *items, style=_MUTED)


def certificate_html(cert) -> str:
    """A ``verigrad.certify.certificate.Certificate``."""
    tex = cert.theorem.latex() if cert.theorem is not None else ""
    why = cert.counterexample or cert.evidence or cert.detail
    return _card(h("div", h("b", cert.name), " ", badge(cert.status)),
                 _math(tex) if tex else (h("code", cert.statement) if cert.statement else None),
                 _wrt(cert.wrt),
                 h("div", ("counterexample: " if cert.counterexample else "") + str(why), style=_MUTED) if why else None,
                 h("div", f"axioms: {', '.join(cert.axioms) or 'none'}", style=_MUTED) if cert.ok else None,
                 h("div", f"holds {cert.scope}", style=_MUTED) if cert.ok else None,
                 status=cert.status)


def certificate_record_html(rec) -> str:
    """A certificate record of ``verigrad.nn.report`` (a layer, a rule or a network)."""
    status, latex = _get(rec, "status"), _get(rec, "latex", "")
    error = _get(rec, "float32_error")
    return _card(h("div", h("span", _get(rec, "kind"), style=_MUTED), " ", h("b", _get(rec, "name")), " ", badge(status)),
                 _math(latex) if latex else None, _wrt(_get(rec, "wrt", {})),
                 h("div", f"sizes {' '.join(_get(rec, 'sizes', []))}; {len(_get(rec, 'axioms', []))} axioms"
                          + (f"; float32 error {error:.1e}" if error is not None else ""), style=_MUTED),
                 h("div", _get(rec, "detail"), style="color:#b3261e") if _get(rec, "detail") else None,
                 status=status)
