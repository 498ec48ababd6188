"""HTML and SVG as strings, escaped by construction.

``h(tag, *children, **attributes)`` builds one element. A child that is ``Raw`` (what
``h`` returns, or MathML from ``verigrad.report.mathml``) is kept as it is; any other
child is text and is escaped. So a docstring with ``<`` or a theorem name with ``&``
cannot break a page, and nothing has to remember to escape.

Attribute names: a trailing ``_`` is dropped (``class_``) and ``_`` becomes ``-``
(``stroke_width``, ``data_name``); ``None`` and ``False`` leave the attribute out,
``True`` writes it bare.
"""
from __future__ import annotations

from html import escape

VOID = frozenset({"meta", "link", "input", "br", "img", "hr"})


class Raw(str):
    """Markup that is already safe to embed."""


def text(s) -> Raw:
    return s if isinstance(s, Raw) else Raw(escape(str(s), quote=False))


def _attr_name(k: str) -> str:
    return k.rstrip("_").replace("_", "-")


def _children(items):
    for c in items:
        if c is None or c is False:
            continue
        if isinstance(c, (list, tuple)) or hasattr(c, "__next__"):
            yield from _children(c)
        else:
            yield text(c)


def h(tag: str, *children, **attrs) -> Raw:
    a = "".join(f" {_attr_name(k)}" if v is True else f' {_attr_name(k)}="{escape(str(v))}"'
                for k, v in attrs.items() if v is not None and v is not False)
    if tag in VOID:
        return Raw(f"<{tag}{a}>")
    return Raw(f"<{tag}{a}>{''.join(_children(children))}</{tag}>")


def join(items, sep=", ") -> Raw:
    return Raw(text(sep).join(text(i) for i in items))


# Status badges: one colour per meaning, the same for theorems and certificates.
# UNKNOWN and plausible are never green: only what the kernel proved is.
TONE = {"proved": "good", "PROVED": "good", "CHECKED": "fair", "plausible": "warn", "TESTED": "warn",
        "failed": "bad", "REFUTED": "bad", "UNKNOWN": "none", "pending": "warn"}


def badge(status: str) -> Raw:
    return h("span", status, class_=f"badge {TONE.get(status, 'none')}", title=_MEANING.get(status))


_MEANING = {
    "proved": "every step and the goal were proved by the kernel",
    "plausible": "the proof did not reach its goal; the steps it has are checked",
    "failed": "the theorem file does not run, or a step was rejected",
    "PROVED": "the kernel proved it for all sizes",
    "CHECKED": "the kernel proved it at the listed concrete sizes only",
    "TESTED": "numeric evidence only",
    "REFUTED": "a counterexample was found",
    "UNKNOWN": "neither proved nor refuted",
    "pending": "the kernel has not proved this step",
}


def slug(s: str) -> str:
    """A file or anchor name: letters, digits, ``._-`` kept, anything else ``-``."""
    out = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in s)
    return out.strip("-") or "x"
