r"""The seed-003 theorems: one ViT block with two drop-path sites, for all sizes.

The block (pre-norm, per-example sites ``sA`` after the out projection and ``sM`` after
fc2, each before its skip add):

.. math::
   h = x + s_A \odot \mathrm{attn}(\mathrm{ln}_1(x)), \qquad
   y = h + s_M \odot \mathrm{mlp}(\mathrm{ln}_2(h); P)

The sublayers are opaque functions with declared VJPs (``Vjp``): the theorems are about
the wiring of the block, the part a renderer writes by hand, and hold for any
differentiable sublayers. ``verigrad.nn.compose.certify(vit_block(...))`` instantiates
them with the certified layer norm, multi-head attention and transformer MLP.

1. ``fwdOD_none``: with both sites absent (1) the block is the drop-free block;
2. ``fwdOD_eq_sites``: the spelled block is the MLP site residual after the attention
   site residual;
3. ``cotInD_eq_vjp``: the flat backward chain as a renderer emits it (the MLP branch fed
   ``sM * dy``, the attention branch ``sA * cotH``, both skips raw) is the block's VJP,
   for the input and for the MLP's parameters;
4. ``cotInD_none``: with both sites absent the chain is the drop-free chain's VJP;
5. the drop path's VJP is the drop path itself at the same mask.

And the controls, each REFUTED with random smooth sublayers: the skips reading the dropped
cotangent; the sites after the skip adds; fc2's weight gradient reading the raw cotangent.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from verigrad.certify import counterexample
from verigrad.certify.certificate import Certificate
from verigrad.kernel import (Apply, IndexVar, Lamda, Num, SizeSym, TensorFn, Theorem, Var, Vjp, instantiate,
                             prove_equal, rewrite, trans, vjp_statement)
from .compose import gc_paused
from .rules import _random_function

B, N, D, Pm = SizeSym("B"), SizeSym("n"), SizeSym("d"), SizeSym("p")
X = (B, N, D)
ln1, attn, ln2 = (TensorFn(f, [X], X) for f in ("ln1", "attn", "ln2"))
mlp = TensorFn("mlp", [X, (Pm,)], X)                 # mlp(z; P): P stands for fc1's and fc2's weights
x, dy, sA, sM, P = Var("x", X), Var("dy", X), Var("sA", (B,)), Var("sM", (B,)), Var("P", (Pm,))
b, i, c = IndexVar("b", B), IndexVar("i", N), IndexVar("c", D)
I = (b, i, c)
ONES = Lamda([IndexVar("e", B)], Num(1))


def _ew(f):
    """An element-wise tensor ``Lamda[b, i, c](f(b, i, c))``."""
    return Lamda(I, f(*I))


def attn_branch(t):
    return Apply(attn, (Apply(ln1, (t,)),))


def mlp_branch(t, params=P):
    return Apply(mlp, (Apply(ln2, (t,)), params))


def block(sa=sA, sm=sM, site_after_skip=False):
    """The block spelled as a renderer writes it (``fwdOD``)."""
    if site_after_skip:       # the control: h = sA * (x + attn), y = sM * (h + mlp)
        h = _ew(lambda b, i, c: sa[b] * (x[b, i, c] + attn_branch(x)[b, i, c]))
        return _ew(lambda b, i, c: sm[b] * (h[b, i, c] + mlp_branch(h)[b, i, c]))
    # One expression, as a renderer emits it: y = x + sA attn(ln1 x) + sM mlp(ln2 h).
    h = _ew(lambda b, i, c: x[b, i, c] + sa[b] * attn_branch(x)[b, i, c])
    return _ew(lambda b, i, c: x[b, i, c] + sa[b] * attn_branch(x)[b, i, c] + sm[b] * mlp_branch(h)[b, i, c])


def site_residual(branch, site, t):
    """A site residual ``t + s * f(t)`` (the composition rule's forward)."""
    return _ew(lambda b, i, c: t[b, i, c] + site[b] * branch(t)[b, i, c])


def chain(sa=sA, sm=sM, control=None):
    """The flat backward chain (``cotInD``): ``(dx, dP)``, with the saves recomputed."""
    h = _ew(lambda b, i, c: x[b, i, c] + sa[b] * attn_branch(x)[b, i, c])
    dyM = _ew(lambda b, i, c: sm[b] * dy[b, i, c])
    z = Apply(ln2, (h,))
    dz = Vjp(mlp, 0, (z, P), dyM)
    dP = Vjp(mlp, 1, (z, P), dy if control == "fc2_weight_raw" else dyM)
    skip2 = dyM if control == "skip_reads_dropped" else dy
    cotH = _ew(lambda b, i, c: skip2[b, i, c] + Vjp(ln2, 0, (h,), dz)[b, i, c])
    dyA = _ew(lambda b, i, c: sa[b] * cotH[b, i, c])
    u = Apply(ln1, (x,))
    skip1 = dyA if control == "skip_reads_dropped" else cotH
    dx = _ew(lambda b, i, c: skip1[b, i, c] + Vjp(ln1, 0, (x,), Vjp(attn, 0, (u,), dyA))[b, i, c])
    return dx, dP


@dataclass
class SeedTheorem:
    name: str
    claim: str
    result: object            # Theorem or Certificate
    seconds: float

    @property
    def status(self) -> str:
        return "PROVED" if isinstance(self.result, Theorem) else self.result.status


def _timed(name, claim, fn) -> SeedTheorem:
    t0 = time.perf_counter()
    out = fn()
    return SeedTheorem(name, claim, out, time.perf_counter() - t0)


def _refute(name, wrong, right, wrt) -> Certificate:
    functions = {f: _random_function(seed=11 + k) for k, f in enumerate((ln1, attn, ln2, mlp))}
    found = counterexample.search(wrong, right, wrt, functions=functions)
    if isinstance(found, counterexample.Evidence):
        return Certificate(name, "UNKNOWN", evidence=str(found))
    return Certificate(name, "REFUTED", counterexample=found)


def theorems() -> list[SeedTheorem]:
    """The five seed theorems (kernel theorems) and the three controls (refuted)."""
    with gc_paused():
        return _theorems()


def _theorems() -> list[SeedTheorem]:
    out = []
    drop_free = _ew(lambda b, i, c: (x[b, i, c] + attn_branch(x)[b, i, c]))
    drop_free = _ew(lambda b, i, c: drop_free[b, i, c] + mlp_branch(drop_free)[b, i, c])
    out.append(_timed("fwdOD_none", "with both sites absent (1) the block is the drop-free block",
                      lambda: prove_equal(block(ONES, ONES), drop_free)))
    composed = site_residual(mlp_branch, sM, site_residual(attn_branch, sA, x))
    out.append(_timed("fwdOD_eq_sites", "the block is the MLP site residual after the attention site residual",
                      lambda: prove_equal(block(), composed)))
    dx, dP = chain()
    out.append(_timed("cotInD_eq_vjp", "the flat backward chain is the block's VJP (input)",
                      lambda: prove_equal(dx, vjp_statement(block(), x, dy))))
    out.append(_timed("cotInD_eq_vjp (MLP weights)", "the chain's MLP weight gradient is the block's VJP",
                      lambda: prove_equal(dP, vjp_statement(block(), P, dy))))

    def none():
        th = instantiate(out[2].result, {sA: ONES, sM: ONES})           # the chain at sites 1 ...
        return trans(th, rewrite(out[0].result, th.rhs))                # ... is the drop-free VJP
    out.append(_timed("cotInD_none", "with both sites absent the chain is the drop-free block's VJP", none))
    s, t = Var("s", (B,)), Var("t", X)
    out.append(_timed("dropPath_vjp_is_self", "the drop path's VJP is the drop path at the same mask",
                      lambda: prove_equal(_ew(lambda b, i, c: s[b] * dy[b, i, c]),
                                          vjp_statement(_ew(lambda b, i, c: s[b] * t[b, i, c]), t, dy))))
    # The controls.
    bad_dx, _ = chain(control="skip_reads_dropped")
    out.append(_timed("control: skips read the dropped cotangent", "REFUTED expected",
                      lambda: _refute("skips read the dropped cotangent", bad_dx, vjp_statement(block(), x, dy), "x")))
    out.append(_timed("control: sites after the skip adds", "REFUTED expected",
                      lambda: _refute("sites after the skip adds", chain()[0],
                                      vjp_statement(block(site_after_skip=True), x, dy), "x")))
    _, bad_dP = chain(control="fc2_weight_raw")
    out.append(_timed("control: fc2's weight gradient reads the raw cotangent", "REFUTED expected",
                      lambda: _refute("fc2 weight reads the raw cotangent", bad_dP, vjp_statement(block(), P, dy), "P")))
    return out
