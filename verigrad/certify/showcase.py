"""The kernel showcase: backward passes of deep-learning layers, stated for all sizes,
and realistic mutants of them (untrusted catalog; the kernel judges each).

Each ``Claim`` is ``lhs = rhs`` where ``lhs`` is a hand-written backward and ``rhs`` the
transpose-Jacobian product of the forward (``vjp_statement``), or an identity.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from verigrad.frontends import ops
from verigrad.frontends.ops import at, lam, sum_over
from verigrad.kernel import IntVal, SizeSym, Term, Var, vjp_statement
from verigrad.kernel import terms as T


@dataclass(frozen=True)
class Claim:
    name: str
    lhs: Term
    rhs: Term
    argument: str
    note: str = ""


n, d, m = SizeSym("n"), SizeSym("d"), SizeSym("m")


def _vjp(name, forward, backward, var, cot, note=""):
    return Claim(name, backward, vjp_statement(forward, var, cot), var.name, note)


# -- dense: y = x W + b -----------------------------------------------------------------

def dense(mutant: str = ""):
    """``y[a, c] = sum_r x[a, r] W[r, c] + b[c]``; cotangents ``dY W^T``, ``x^T dY``,
    ``sum_a dY[a]``."""
    X, W, b, dY = Var("x", (m, n)), Var("W", (n, d)), Var("b", (d,)), Var("dY", (m, d))
    Y = lam([m, d], lambda a, c: at(ops.matmul(X, W), a, c) + at(b, c))
    Wt = W if mutant == "no_transpose" else ops.transpose(W)
    if mutant == "no_transpose":
        # the classic bug: dY W instead of dY W^T (shapes only fit when d == n)
        W2 = Var("W", (n, n))
        Y2 = lam([m, n], lambda a, c: at(ops.matmul(X, W2), a, c) + at(Var("b", (n,)), c))
        dY2 = Var("dY", (m, n))
        return [_vjp("dense dx (W not transposed)", Y2, ops.matmul(dY2, W2), X, dY2)]
    out = [
        _vjp("dense dx", Y, ops.matmul(dY, Wt), X, dY, "dY W^T"),
        _vjp("dense dW", Y, ops.matmul(ops.transpose(X), dY), W, dY, "x^T dY"),
        _vjp("dense db", Y, lam([d], lambda c: sum_over(m, lambda a: at(dY, a, c))), b, dY, "column sums of dY"),
    ]
    if mutant == "factor2":
        out = [_vjp("dense dW (factor 2)", Y, lam([n, d], lambda r, c: 2 * at(ops.matmul(ops.transpose(X), dY), r, c)),
                    W, dY)]
    return out


# -- softmax ------------------------------------------------------------------------------

def softmax_backward(p: Term, dy: Term, keep_p: bool = True) -> Term:
    """``dx = p * (dy - <dy, p>)`` (the mutant drops the leading ``p``)."""
    (k,) = p.shape
    inner = lambda i: at(dy, i) - sum_over(k, lambda j: at(dy, j) * at(p, j))  # noqa: E731
    return lam([k], (lambda i: at(p, i) * inner(i)) if keep_p else inner)


def softmax(stable: bool = False, mutant: str = ""):
    x, dy = Var("x", (n,)), Var("dy", (n,))
    p = ops.softmax(x, stable=stable)
    if mutant == "no_p":
        return [_vjp("softmax (missing p factor)", p, softmax_backward(p, dy, keep_p=False), x, dy)]
    if mutant == "sign":
        return [_vjp("softmax (sign flip)", p, lam([n], lambda i: -at(softmax_backward(p, dy), i)), x, dy)]
    name = "softmax, max subtracted" if stable else "softmax"
    return [_vjp(name, p, softmax_backward(p, dy), x, dy, "p * (dy - sum(dy p))")]


# -- layer norm ------------------------------------------------------------------------

def layer_norm_backward(x: Term, dy: Term, eps: Term, gamma: Term | None = None, drop_term: bool = False) -> Term:
    """``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))`` with ``g = dy * gamma``."""
    (k,) = x.shape
    mu = ops.mean(x)
    r = ops.rsqrt(sum_over(k, lambda j: (at(x, j) - mu) ** 2) / IntVal(k) + eps)
    xh = lambda i: (at(x, i) - mu) * r  # noqa: E731
    g = (lambda i: at(dy, i) * at(gamma, i)) if gamma is not None else (lambda i: at(dy, i))  # noqa: E731
    mean_g = sum_over(k, g) / IntVal(k)
    mean_gx = sum_over(k, lambda j: g(j) * xh(j)) / IntVal(k)
    if drop_term:
        return lam([k], lambda i: r * (g(i) - mean_g))
    return lam([k], lambda i: r * (g(i) - mean_g - xh(i) * mean_gx))


def layer_norm(affine: bool = False, mutant: str = ""):
    x, dy = Var("x", (n,)), Var("dy", (n,))
    eps = Var("eps", (), ("positive",))
    if not affine:
        y = ops.layer_norm(x, eps)
        bwd = layer_norm_backward(x, dy, eps, drop_term=mutant == "drop_term")
        name = "layer norm (no xhat*mean(dy*xhat) term)" if mutant else "layer norm"
        return [_vjp(name, y, bwd, x, dy, "rstd (dy - mean dy - xhat mean(dy xhat))")]
    gamma, beta = Var("gamma", (n,)), Var("beta", (n,))
    y = ops.layer_norm(x, eps, gamma, beta)
    mu = ops.mean(x)
    r = ops.rsqrt(sum_over(n, lambda j: (at(x, j) - mu) ** 2) / IntVal(n) + eps)
    return [
        _vjp("layer norm affine dx", y, layer_norm_backward(x, dy, eps, gamma), x, dy),
        _vjp("layer norm affine dgamma", y, lam([n], lambda i: at(dy, i) * (at(x, i) - mu) * r), gamma, dy),
        _vjp("layer norm affine dbeta", y, dy, beta, dy),
    ]


# -- attention --------------------------------------------------------------------------

def attention_backward(Q, K, V, dY, swap_qk: bool = False):
    """``P = softmax(Q K^T / sqrt d)``; ``dS = P * (dY V^T - rowsum(dY V^T * P))``;
    ``dQ = dS K / sqrt d``, ``dK = dS^T Q / sqrt d``, ``dV = P^T dY``."""
    (N, D) = Q.shape
    sc = ops.rsqrt(IntVal(D))
    P = ops.softmax(lam([N, N], lambda i, j: sum_over(D, lambda c: at(Q, i, c) * at(K, j, c)) * sc))
    dP = ops.matmul(dY, ops.transpose(V))
    dS = lam([N, N], lambda i, j: at(P, i, j) * (at(dP, i, j) - sum_over(N, lambda q: at(dP, i, q) * at(P, i, q))))
    dQ = lam([N, D], lambda i, c: at(ops.matmul(dS, K), i, c) * sc)
    dK = lam([N, D], lambda i, c: at(ops.matmul(ops.transpose(dS), K if swap_qk else Q), i, c) * sc)
    dV = ops.matmul(ops.transpose(P), dY)
    return dQ, dK, dV


def attention(mutant: str = ""):
    Q, K, V, dY = (Var(s, (n, d)) for s in ("Q", "K", "V", "dY"))
    S = ops.attention(Q, K, V)
    dQ, dK, dV = attention_backward(Q, K, V, dY, swap_qk=mutant == "swap_qk")
    if mutant == "swap_qk":
        return [_vjp("attention dK (Q and K swapped)", S, dK, K, dY)]
    return [_vjp("attention dQ", S, dQ, Q, dY), _vjp("attention dK", S, dK, K, dY),
            _vjp("attention dV", S, dV, V, dY)]


def seed_row_identity():
    """Row i of ``softmax(Q K^T / sqrt d) V`` is ``softmax(Q[i] K^T / sqrt d) V``."""
    Q, K, V = (Var(s, (n, d)) for s in ("Q", "K", "V"))
    i = T.IndexVar("i", n)
    scores = lam([n], lambda j: sum_over(d, lambda c: at(Q, i, c) * at(K, j, c)) * ops.rsqrt(IntVal(d)))
    rhs = ops.matmul(ops.softmax(scores), V)
    return [Claim("seed: row i of softmax(QK^T/sqrt d)V", T.Index(ops.attention(Q, K, V), (i,)), rhs, "S")]


def composite_ln_attention():
    """Flat composite: layer norm, then single-head self-attention; the input cotangent
    written as one chain (attention backward at H, three branches summed, then the
    layer norm backward row by row)."""
    X, dY = Var("X", (n, d)), Var("dY", (n, d))
    eps = Var("eps", (), ("positive",))
    H = ops.layer_norm(X, eps)
    S = ops.attention(H, H, H)
    dQ, dK, dV = attention_backward(H, H, H, dY)
    dH = lam([n, d], lambda i, c: at(dQ, i, c) + at(dK, i, c) + at(dV, i, c))
    dX = lam([n], lambda i: layer_norm_backward(at(X, i), at(dH, i), eps))
    return [_vjp("layer norm -> self-attention dx (flat)", S, dX, X, dY)]


def proved_claims():
    """The claims the kernel must prove for all sizes."""
    return (dense() + softmax() + softmax(stable=True) + layer_norm() + layer_norm(affine=True)
            + attention() + seed_row_identity())


def mutant_claims():
    """Wrong backward passes: each must never be PROVED."""
    return (dense("no_transpose") + dense("factor2") + softmax(mutant="no_p") + softmax(mutant="sign")
            + layer_norm(mutant="drop_term") + attention("swap_qk"))


_ = Fraction
