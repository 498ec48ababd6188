"""Attach the displays to the kernel's classes, which define none (untrusted).

Plain text and LaTeX come from ``printing``; notebooks' HTML from ``notebook``, imported
only when a notebook asks for it. Importing verigrad runs ``install()``. This module
sits above both printers, so neither imports the other's user.
"""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.kernel.theorem import Condition, Theorem

from .printing import condition, latex, statement, statement_latex, text


def theorem_html(th) -> str:
    """A theorem as HTML with MathML (``Theorem._repr_html_``)."""
    from .notebook import theorem_html as html
    return html(th)


def install():
    T.Term.__repr__ = text
    T.Term._repr_latex_ = lambda t: "$" + latex(t) + "$"           # notebooks: the term as math
    Condition.__str__ = condition
    Theorem.statement, Theorem.latex, Theorem._repr_html_ = statement, statement_latex, theorem_html
    Theorem.__repr__ = lambda th: f"<Theorem {statement(th)}>"
    Theorem._repr_latex_ = lambda th: "$" + statement_latex(th) + "$"


install()
