r"""Composition rules, proved once by the kernel over opaque branches (untrusted driver).

Each rule states the backward of a combinator in terms of its branches' *declared*
VJPs (``Vjp(f, k, args, cot) = J_k f(args)^T cot``, the kernel's term for "whatever f's
certified backward is"), and the kernel proves it equal to the transpose-Jacobian of
the combinator's forward, for all sizes:

=====================  ===========================================  ==============================================
rule                   forward                                      backward (cotangent of x)
=====================  ===========================================  ==============================================
chain                  ``g(f(x))``                                  ``vjp_f(x, vjp_g(f(x), dy))``
fan-in                 ``f(x) + g(x)``                              ``vjp_f(x, dy) + vjp_g(x, dy)``
residual               ``x + f(x)``                                 ``dy + vjp_f(x, dy)``
drop-path site         ``x + s[b] f(x)``  (s per example)           ``dy + vjp_f(x, s[b] dy)``
per-example map        ``s[b] f(x[b])``                             ``vjp_f(x[b], s[b] dy[b])``
shared parameter       ``f(x[b], W)`` over examples b               ``dW = sum_b vjp_f,W(x[b], W; dy[b])``
=====================  ===========================================  ==============================================

A rule is proved once per rank signature (fresh size symbols for every axis) and
reused by instantiating its sizes and branches (``verigrad.nn.compose``). Each rule has
a control: the same statement with a realistic bug (the skip reading the dropped
cotangent, the site after the skip add, ...), which must be REFUTED.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from verigrad.kernel import (Apply, IndexVar, Lamda, SizeSym, Sum, TensorFn, Theorem, Var, Vjp, prove_equal,
                             vjp_statement)
from verigrad.certify.certificate import Certificate
from verigrad.certify import counterexample


@dataclass
class Rule:
    """A composition rule: its kernel theorem, and what it was proved over: the opaque
    ``branches`` by role ("f", "g"), the ``variables`` by role ("x" is the one
    differentiated, "dy" its cotangent, "s" a site, "c"/"u" constants), the
    ``forward`` term of the statement, and ``shapes``: role -> size symbols."""
    name: str
    theorem: Theorem
    branches: tuple            # the opaque TensorFns
    variables: dict            # role -> Var (x, dy, s, W, ...)
    sizes: tuple               # the size symbols, one per axis
    seconds: float
    control: tuple = field(default=())   # (description, wrong lhs)
    forward: object = None
    shapes: dict = field(default_factory=dict)

    @property
    def fns(self) -> dict:
        return {f.name: f for f in self.branches}


def _sizes(prefix: str, rank: int):
    return tuple(SizeSym(f"{prefix}{i}") for i in range(rank))


def _idx(shape, names="ijkl"):
    return [IndexVar(f"{names[a]}", s) for a, s in enumerate(shape)]


def _entry(t, idx):
    return t[tuple(idx)] if idx else t


def _prove(name, lhs, rhs, branches, variables, sizes, control=(), shapes=None):
    t0 = time.perf_counter()
    th = prove_equal(lhs, rhs)
    if not isinstance(th, Theorem):
        raise AssertionError(f"the kernel did not prove the {name} rule: {th}")
    forward = _forward_of(rhs)
    return Rule(name, th, branches, variables, sizes, time.perf_counter() - t0, control, forward, shapes or {})


def _forward_of(statement):
    """The forward term inside ``vjp_statement(forward, x, dy)``."""
    t = statement.body if isinstance(statement, Lamda) else statement
    while isinstance(t, Sum):
        t = t.body
    deriv = t.terms[1]                          # cot[I] * d forward[I] / d x[K]
    body = deriv.body
    return body.base if body.shape == () and hasattr(body, "base") and body.base.shape else body


@functools.lru_cache(maxsize=None)
def chain(rank_x: int, rank_y: int, rank_z: int) -> Rule:
    """``g(f(x))``: the cotangent of x is ``vjp_f(x, vjp_g(f(x), dy))``."""
    X, Y, Z = _sizes("a", rank_x), _sizes("b", rank_y), _sizes("c", rank_z)
    f, g = TensorFn("f", [X], Y), TensorFn("g", [Y], Z)
    x, dy = Var("x", X), Var("dy", Z)
    fx = Apply(f, (x,))
    lhs = Vjp(f, 0, (x,), Vjp(g, 0, (fx,), dy))
    wrong = Vjp(f, 0, (x,), Vjp(g, 0, (x,), dy)) if X == Y else Vjp(f, 0, (x,), Vjp(g, 0, (fx,), dy * 2))
    return _prove("chain", lhs, vjp_statement(Apply(g, (fx,)), x, dy), (f, g), {"x": x, "dy": dy}, X + Y + Z,
                  ("g's VJP read at x instead of f(x)" if X == Y else "the cotangent doubled", wrong),
                  {"x": X, "y": Y, "z": Z})


@functools.lru_cache(maxsize=None)
def outer_parameter(rank_u: int, rank_x: int, rank_z: int) -> Rule:
    """``g(u, x)`` with ``u`` not depending on x (a parameter of the second layer of a
    chain, ``u = f(input)``): the cotangent of x is g's declared VJP in its second
    argument, at ``(u, x)``."""
    U, X, Z = _sizes("a", rank_u), _sizes("b", rank_x), _sizes("c", rank_z)
    g = TensorFn("g", [U, X], Z)
    u, x, dy = Var("u", U), Var("x", X), Var("dy", Z)
    return _prove("outer parameter", Vjp(g, 1, (u, x), dy), vjp_statement(Apply(g, (u, x)), x, dy), (g,),
                  {"x": x, "dy": dy, "u": u}, U + X + Z, ("the first argument's VJP", Vjp(g, 1, (u, x), dy * 2)),
                  {"y": U, "x": X, "z": Z})


@functools.lru_cache(maxsize=None)
def fan_in(rank_x: int, rank_y: int) -> Rule:
    """``f(x) + g(x)``: the cotangents of the two branches add up."""
    X, Y = _sizes("a", rank_x), _sizes("b", rank_y)
    f, g = TensorFn("f", [X], Y), TensorFn("g", [X], Y)
    x, dy = Var("x", X), Var("dy", Y)
    I = _idx(Y)
    fwd = Lamda(I, _entry(Apply(f, (x,)), I) + _entry(Apply(g, (x,)), I)) if I else Apply(f, (x,)) + Apply(g, (x,))
    K = _idx(X, "pqrs")
    lhs = Lamda(K, Vjp(f, 0, (x,), dy)[tuple(K)] + Vjp(g, 0, (x,), dy)[tuple(K)])
    return _prove("fan-in", lhs, vjp_statement(fwd, x, dy), (f, g), {"x": x, "dy": dy}, X + Y,
                  ("g's branch dropped", Vjp(f, 0, (x,), dy)), {"x": X, "y": Y})


@functools.lru_cache(maxsize=None)
def offset(rank_x: int, rank_y: int, side: str = "left", site: bool = False) -> Rule:
    """``c + f(x)`` (``side="left"``) or ``f(x) + c``, optionally ``c + s[b] f(x)`` with a
    site: a parameter inside one branch of a skip or a fan-in, the other summand ``c``
    not depending on it. The cotangent is the branch's VJP of ``dy`` (of ``s dy``)."""
    X, Y = _sizes("a", rank_x), _sizes("b", rank_y)
    f = TensorFn("f", [X], Y)
    x, dy, c, s = Var("x", X), Var("dy", Y), Var("c", Y), Var("s", Y[:1])
    I = _idx(Y)
    fx = Apply(f, (x,))[tuple(I)]
    if site:
        fx = s[I[0]] * fx
    fwd = Lamda(I, c[tuple(I)] + fx if side == "left" else fx + c[tuple(I)])
    cot = Lamda(I, s[I[0]] * dy[tuple(I)]) if site else dy
    variables = {"x": x, "dy": dy, "c": c} | ({"s": s} if site else {})
    wrong = Vjp(f, 0, (x,), dy) if site else Vjp(f, 0, (x,), Lamda(I, 2 * dy[tuple(I)]))
    name = "offset" + (" with a site" if site else "") + ("" if side == "left" else " (right)")
    return _prove(name, Vjp(f, 0, (x,), cot), vjp_statement(fwd, x, dy), (f,), variables, X + Y,
                  ("the site ignored" if site else "the cotangent doubled", wrong), {"x": X, "y": Y})


def _residual_lhs(f, x, cot, dy, K):
    return Lamda(K, dy[tuple(K)] + Vjp(f, 0, (x,), cot)[tuple(K)])


@functools.lru_cache(maxsize=None)
def residual(rank: int) -> Rule:
    """``x + f(x)``: the skip passes ``dy`` through, the branch adds ``vjp_f(x, dy)``."""
    X = _sizes("a", rank)
    f = TensorFn("f", [X], X)
    x, dy = Var("x", X), Var("dy", X)
    I, K = _idx(X), _idx(X, "pqrs")
    fwd = Lamda(I, x[tuple(I)] + Apply(f, (x,))[tuple(I)])
    return _prove("residual", _residual_lhs(f, x, dy, dy, K), vjp_statement(fwd, x, dy), (f,),
                  {"x": x, "dy": dy}, X, ("the skip dropped", Vjp(f, 0, (x,), dy)), {"x": X})


@functools.lru_cache(maxsize=None)
def site_residual(rank: int) -> Rule:
    """``x + s[b] * f(x)`` with a per-example scalar ``s`` (a drop-path site, the 1/keep
    scaling folded into ``s``): ``dy + vjp_f(x, s[b] dy)`` -- the skip reads the raw
    cotangent, the branch the scaled one."""
    X = _sizes("a", rank)                     # axis 0 is the batch
    f = TensorFn("f", [X], X)
    x, dy, s = Var("x", X), Var("dy", X), Var("s", X[:1])
    I, K = _idx(X), _idx(X, "pqrs")
    fwd = Lamda(I, x[tuple(I)] + s[I[0]] * Apply(f, (x,))[tuple(I)])
    scaled = Lamda(I, s[I[0]] * dy[tuple(I)])
    wrong = Lamda(K, scaled[tuple(K)] + Vjp(f, 0, (x,), scaled)[tuple(K)])   # the skip reads the dropped cotangent
    return _prove("drop-path site", _residual_lhs(f, x, scaled, dy, K), vjp_statement(fwd, x, dy), (f,),
                  {"x": x, "dy": dy, "s": s}, X, ("the skip reads the dropped cotangent", wrong), {"x": X})


@functools.lru_cache(maxsize=None)
def site_after_skip(rank: int) -> Rule:
    """The control of the seed: a site applied after the skip add, ``s[b] (x + f(x))``,
    is a different layer, whose backward scales both paths: ``s dy + vjp_f(x, s dy)``."""
    X = _sizes("a", rank)
    f = TensorFn("f", [X], X)
    x, dy, s = Var("x", X), Var("dy", X), Var("s", X[:1])
    I, K = _idx(X), _idx(X, "pqrs")
    fwd = Lamda(I, s[I[0]] * (x[tuple(I)] + Apply(f, (x,))[tuple(I)]))
    scaled = Lamda(I, s[I[0]] * dy[tuple(I)])
    lhs = Lamda(K, scaled[tuple(K)] + Vjp(f, 0, (x,), scaled)[tuple(K)])
    return _prove("site after the skip add", lhs, vjp_statement(fwd, x, dy), (f,), {"x": x, "dy": dy, "s": s}, X,
                  ("the site's backward used for it", _residual_lhs(f, x, scaled, dy, K)))


@functools.lru_cache(maxsize=None)
def per_example(rank_in: int, rank_out: int) -> Rule:
    """``y[b] = s[b] f(x[b])`` with a different scalar per example: the cotangent of
    example b is ``vjp_f(x[b], s[b] dy[b])``."""
    B = SizeSym("batch")
    X, Y = _sizes("a", rank_in), _sizes("b", rank_out)
    f = TensorFn("f", [X], Y)
    x, dy, s = Var("x", (B,) + X), Var("dy", (B,) + Y), Var("s", (B,))
    b = IndexVar("e", B)
    I = _idx(Y)
    fwd = Lamda([b] + I, s[b] * _entry(Apply(f, (x[b],)), I))
    K = _idx(X, "pqrs")
    cot = Lamda(I, s[b] * dy[(b,) + tuple(I)]) if I else s[b] * dy[b]
    lhs = Lamda([b] + K, _entry(Vjp(f, 0, (x[b],), cot), K))
    wrong_cot = Lamda(I, dy[(b,) + tuple(I)]) if I else dy[b]
    wrong = Lamda([b] + K, _entry(Vjp(f, 0, (x[b],), wrong_cot), K))
    return _prove("per-example map", lhs, vjp_statement(fwd, x, dy), (f,), {"x": x, "dy": dy, "s": s},
                  (B,) + X + Y, ("the example's scalar ignored", wrong))


@functools.lru_cache(maxsize=None)
def shared_parameter(rank_in: int, rank_w: int, rank_out: int) -> Rule:
    """``y[b] = f(x[b], W)`` with W shared by all examples: ``dW = sum_b vjp_{f,W}(x[b], W;
    dy[b])``."""
    B = SizeSym("batch")
    X, Wsh, Y = _sizes("a", rank_in), _sizes("w", rank_w), _sizes("b", rank_out)
    f = TensorFn("f", [X, Wsh], Y)
    x, W, dy = Var("x", (B,) + X), Var("W", Wsh), Var("dy", (B,) + Y)
    b = IndexVar("e", B)
    I = _idx(Y)
    fwd = Lamda([b] + I, _entry(Apply(f, (x[b], W)), I))
    K = _idx(Wsh, "pqrs")
    cot = Lamda(I, dy[(b,) + tuple(I)]) if I else dy[b]
    lhs = Lamda(K, Sum(b, _entry(Vjp(f, 1, (x[b], W), cot), K)))
    wrong = Lamda(K, 2 * Sum(b, _entry(Vjp(f, 1, (x[b], W), cot), K)))
    return _prove("shared parameter", lhs, vjp_statement(fwd, W, dy), (f,), {"x": x, "W": W, "dy": dy},
                  (B,) + X + Wsh + Y, ("the per-example gradients counted twice", wrong))


def standard_rules() -> list[Rule]:
    """The rules at the rank signatures the networks use (reported by `certificates`)."""
    return [chain(2, 2, 2), outer_parameter(2, 2, 2), fan_in(2, 2), residual(2), offset(2, 2),
            site_residual(3), offset(2, 3, site=True), site_after_skip(3), per_example(1, 1),
            shared_parameter(1, 2, 1)]


# -- controls ------------------------------------------------------------------------------

def _random_function(seed):
    """A smooth interpretation of an opaque branch for numeric checks: ``tanh(A v) +
    0.3 (A v)^2 + c`` of its flattened arguments, ``A`` and ``c`` random for each
    input/output size (``evaluate`` passes the output shape)."""
    rng = np.random.default_rng(seed)
    cache: dict = {}

    def fn(*args, out_shape):
        flat = np.concatenate([np.ravel(a) for a in args])
        n_out = int(np.prod(out_shape)) if out_shape else 1
        if (len(flat), n_out) not in cache:
            cache[len(flat), n_out] = (rng.standard_normal((n_out, len(flat))) / np.sqrt(len(flat) + 1),
                                       rng.standard_normal(n_out))
        A, c = cache[len(flat), n_out]
        v = A @ flat
        return (np.tanh(v) + 0.3 * v ** 2 + c).reshape(out_shape)

    return fn


def refute_control(rule: Rule) -> Certificate:
    """The rule's control, which must be REFUTED: both sides evaluated with random smooth
    functions for the opaque branches."""
    desc, wrong = rule.control
    t0 = time.perf_counter()
    functions = {f: _random_function(seed=7 + i) for i, f in enumerate(rule.branches)}
    wrt = (rule.variables.get("W") or rule.variables["x"]).name
    found = counterexample.search(wrong, rule.theorem.rhs, wrt, functions=functions)
    name = f"{rule.name} control: {desc}"
    if isinstance(found, counterexample.Evidence):
        return Certificate(name, "UNKNOWN", evidence=str(found), seconds=time.perf_counter() - t0)
    return Certificate(name, "REFUTED", counterexample=found, seconds=time.perf_counter() - t0)
