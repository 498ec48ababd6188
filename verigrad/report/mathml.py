r"""LaTeX to MathML (latex2mathml), which browsers render natively: no script, no font
download, no network, so a page works from ``file://``.

The LaTeX comes from ``verigrad.report.printing``. Two things are adjusted first, for
what MathML Core renders: ``\mathbb{1}`` (an indicator) becomes the character 𝟙,
since browsers ignore ``mathvariant`` on digits. The LaTeX source rides along as
``alttext`` (screen readers, copy and paste). Input latex2mathml cannot read is shown
as its source in a ``<code class="tex">``, never dropped.
"""
from __future__ import annotations

from functools import lru_cache
from html import escape

from .markup import Raw, h

_BEFORE = ((r"\mathbb{1}", "\U0001D7D9"),)


@lru_cache(maxsize=4096)
def mathml(tex: str, display: bool = False) -> Raw:
    """``<math>`` for the LaTeX ``tex`` (inline, or a block when ``display``)."""
    from latex2mathml.converter import convert
    src = tex
    for a, b in _BEFORE:
        src = src.replace(a, b)
    try:
        out = convert(src, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - latex2mathml raises many kinds; the source is shown instead
        return h("code", tex, class_="tex", title="LaTeX that could not be converted to MathML")
    return Raw(out.replace("<math ", f'<math alttext="{escape(tex)}" ', 1))


def term_html(term) -> Raw:
    """A kernel term as inline MathML."""
    from .printing import latex
    return mathml(latex(term))


def statement_mathml(th) -> Raw:
    """A kernel theorem's statement ``hyps |- lhs = rhs`` as block MathML."""
    from .printing import statement_latex
    return mathml(statement_latex(th), display=True)
