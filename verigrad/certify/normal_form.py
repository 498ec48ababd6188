"""The kernel's normal form of a term, as a term: a view for numeric evaluation and
display. It proves nothing (it lives outside the kernel and makes no theorem)."""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.kernel.normal import Normalizer
from verigrad.kernel.reify import reify
from verigrad.kernel.sizes import Poly, fresh_index


def normal_form(t: T.Term) -> T.Term:
    """The normal form of ``t`` (a ``Lamda`` over fresh indices for a tensor)."""
    idx = [fresh_index(s, "k", "h") for s in t.shape]
    body = reify(Normalizer().norm(T.as_term(t), tuple(Poly.sym(v) for v in idx)))
    return T.Lamda(idx, body) if idx else body
