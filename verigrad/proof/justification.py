"""Justification: the few ways the proof language turns proposals into kernel theorems.

Every function here calls only the kernel's rules (``prove_equal``, ``trans``,
``symm``, ``rewrite``, ``index``, ``abstract``, ``instantiate``). A tactic proposes a new
expression; ``equate`` asks the kernel to prove old = new. Nothing here can make a
theorem the kernel did not make; a wrong proposal ends in ``StepRejected``.

The bottom of the facts layer: it works on kernel terms and theorems only.
"""
from __future__ import annotations

from verigrad.kernel import (Failure, KernelError, Theorem, instantiate, prove_equal, refl, rewrite, symm, trans)
from verigrad.kernel import terms as T

from .errors import ProofError


class StepRejected(ProofError):
    """The kernel could not justify a proposed step."""


def decide(lhs: T.Term, rhs: T.Term, what: str) -> Theorem:
    """``|- lhs = rhs`` by the kernel's decision procedure, or ``StepRejected``.

    Definitions occurring on both sides are first treated as opaque: the kernel decides
    the equation with each replaced by a fresh variable, and ``instantiate`` puts the
    definitions back (checked by the kernel). Most steps rearrange what surrounds a
    definition, and this keeps the kernel from unfolding it; when the step needs the
    definition's body, the full decision follows."""
    if lhs is rhs:
        return refl(lhs)
    th = _decide_generalized(lhs, rhs)
    if th is not None:
        return th
    res = prove_equal(lhs, rhs)
    if isinstance(res, Failure):
        raise StepRejected(f"{what}: the kernel cannot show {lhs!r} = {rhs!r} ({res})")
    return res


def _named_in(t: T.Term, out: dict):
    """The definitions (``Named``) in ``t``, outermost only, with no free indices."""
    stack, seen = [t], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, T.Named):
            if not x.free_idx:
                out[x] = None
            continue
        for a in x._args:
            if isinstance(a, T.Term):
                stack.append(a)
            elif isinstance(a, tuple):
                stack.extend(b for b in a if isinstance(b, T.Term))
    return out


_opaque: dict = {}


def _opaque_var(named: T.Named) -> T.Var:
    v = _opaque.get(named)
    if v is None:
        v = _opaque[named] = T.Var(f"{named.name}#{len(_opaque)}", named.shape)
    return v


def _replace_named(t: T.Term, mapping: dict, atoms: frozenset, cache: dict) -> T.Term:
    hit = cache.get(t)
    if hit is not None:
        return hit
    if t in mapping:
        out = mapping[t]
    elif not (t.atoms & atoms):
        out = t
    else:
        out = T.map_args(t, lambda a: _replace_named(a, mapping, atoms, cache))
    cache[t] = out
    return out


def _decide_generalized(lhs: T.Term, rhs: T.Term) -> Theorem | None:
    both = _named_in(lhs, {}).keys() & _named_in(rhs, {}).keys()
    if not both:
        return None
    mapping = {n: _opaque_var(n) for n in both}
    atoms = frozenset().union(*[n.atoms for n in both])
    try:
        cache: dict = {}
        gl, gr = _replace_named(lhs, mapping, atoms, cache), _replace_named(rhs, mapping, atoms, cache)
        res = prove_equal(gl, gr)
        if isinstance(res, Failure):
            return None
        # the kernel checks the instantiation (e.g. that no derivative changes meaning)
        th = instantiate(res, {v: n for n, v in mapping.items()})
    except KernelError:
        return None
    return th if th.lhs is lhs and th.rhs is rhs else None


def equate(old: T.Term, new: T.Term, what: str, using: Theorem | None = None) -> Theorem:
    """``|- old = new``: by rewriting with ``using`` (a theorem ``a = b``: every ``a`` in
    ``old`` becomes ``b``) and then deciding the rest, or by deciding it outright."""
    if old is new:
        return refl(old)
    if using is not None:
        try:
            th = rewrite(using, old)
        except KernelError:
            th = None
        if th is not None:
            if th.rhs is new:
                return th
            try:
                return trans(th, decide(th.rhs, new, what))
            except StepRejected:
                pass
    return decide(old, new, what)


def chain(*ths: Theorem) -> Theorem:
    out = ths[0]
    for th in ths[1:]:
        out = trans(out, th)
    return out


def fit(th: Theorem, lhs: T.Term, rhs: T.Term, what: str) -> Theorem:
    """A theorem of exactly ``lhs = rhs`` from ``th`` (whose sides equal them by the
    decision procedure, typically up to beta-reduction)."""
    if th.lhs is lhs and th.rhs is rhs:
        return th
    left = decide(lhs, th.lhs, what)
    right = decide(th.rhs, rhs, what)
    return chain(left, th, right)


def forward(th_old: Theorem, eq_l: Theorem, eq_r: Theorem) -> Theorem:
    """From ``L = R``, ``L = L'`` and ``R = R'`` infer ``L' = R'``."""
    return chain(symm(eq_l), th_old, eq_r)


def backward(th_new: Theorem, eq_l: Theorem, eq_r: Theorem) -> Theorem:
    """From ``L' = R'``, ``L = L'`` and ``R = R'`` infer ``L = R``."""
    return chain(eq_l, th_new, symm(eq_r))


def by_difference(goal_l: T.Term, goal_r: T.Term, th: Theorem, what: str) -> Theorem:
    """``goal_l = goal_r`` from ``th: p = q`` when ``goal_l - goal_r`` and ``p - q`` have the
    same normal form: ``goal_l = goal_r + (p - q) = goal_r + (q - q) = goal_r``."""
    p, q = th.lhs, th.rhs
    bridge = T.Add((goal_r, T.Add((p, T.Mul((T.Num(-1), q))))))
    step1 = decide(goal_l, bridge, what)
    step2 = rewrite(th, bridge)
    step3 = decide(step2.rhs, goal_r, what)
    return chain(step1, step2, step3)
