"""Tensor operations as kernel terms (untrusted sugar over the kernel's constructors).

Each function builds the indexed term a mathematician would write:
``matmul(A, B) = Lamda[i, k](Sum[j](A[i, j] B[j, k]))``. Indexing a ``Lamda`` is
beta-reduced on the spot so statements stay readable. Bound indices get short names
that do not clash with the indices already in the operands.
"""
from __future__ import annotations

from fractions import Fraction

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, KernelError, Poly, as_poly, fresh_index

_LETTERS = "ijklabcdpqrstuvw"


def index_names(t: T.Term) -> set:
    """Names of every index variable in ``t``, free or bound."""
    out, seen, stack = set(), set(), [t]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, IndexVar):
            out.add(x.name)
        elif isinstance(x, Poly):
            out |= {s.name for s in x.index_vars()}
        elif isinstance(x, T.Term):
            stack.extend(x._args)
        elif isinstance(x, tuple):
            stack.extend(x)
    return out


def _pick(sizes, used: set, prefer: str) -> list:
    out = []
    for s in sizes:
        for ch in list(prefer) + [f"{c}{n}" for n in range(1, 100) for c in _LETTERS]:
            if ch not in used:
                used.add(ch)
                out.append(IndexVar(ch, as_poly(s)))
                break
    return out


def fresh(sizes, *avoid_terms, prefer: str = _LETTERS) -> list:
    """Index variables for ``sizes`` named by letters unused in ``avoid_terms``."""
    used = set()
    for t in avoid_terms:
        used |= index_names(t)
    return _pick(sizes, used, prefer)


def _bind(sizes, body_fn, make, prefer):
    """Build a binder without capture: the body is made with placeholder indices, which
    are then renamed to letters the finished body does not use."""
    holders = [fresh_index(as_poly(s), "h", "h") for s in sizes]
    body = T.as_term(body_fn(*holders))
    names = _pick(sizes, index_names(body) - {h.name for h in holders}, prefer)
    body = T.subst(body, {h: Poly.sym(v) for h, v in zip(holders, names)})
    return make(names, body)


def at(t: T.Term, *idx) -> T.Term:
    """``t[idx]``, beta-reducing a Lamda."""
    idx = tuple(as_poly(e) if not isinstance(e, Poly) else e for e in idx)
    while isinstance(t, T.Lamda) and idx:
        k = min(len(t.idxs), len(idx))
        body = T.subst(t.body, dict(zip(t.idxs[:k], idx[:k])))
        rest = t.idxs[k:]
        t = T.Lamda(rest, body) if rest else body
        idx = idx[k:]
    return T.Index(t, idx) if idx else t


def lam(sizes, body_fn, *_unused) -> T.Term:
    """``Lamda[i..](body_fn(i..))`` with index names the body does not use."""
    return _bind(sizes, body_fn, T.Lamda, _LETTERS)


def sum_over(size, body_fn, *_unused) -> T.Term:
    """``Sum[j](body_fn(j))`` with an index name the body does not use."""
    return _bind([size], body_fn, lambda vs, b: T.Sum(vs[0], b), "jlcpqrst")


def num(x) -> T.Term:
    return T.as_term(x)


def exp(x):
    return T.Func("exp", (T.as_term(x),))


def log(x):
    return T.Func("log", (T.as_term(x),))


def tanh(x):
    return T.Func("tanh", (T.as_term(x),))


def erf(x):
    return T.Func("erf", (T.as_term(x),))


def sqrt(x):
    return T.Pow(T.as_term(x), Fraction(1, 2))


def rsqrt(x):
    return T.Pow(T.as_term(x), Fraction(-1, 2))


def transpose(A: T.Term) -> T.Term:
    if len(A.shape) != 2:
        raise KernelError(f"transpose of a rank-{len(A.shape)} term")
    return lam([A.shape[1], A.shape[0]], lambda i, j: at(A, j, i), A)


def matmul(A: T.Term, B: T.Term) -> T.Term:
    """Matrix (or vector) product; the contracted sizes must agree."""
    a, b = A.shape, B.shape
    if not a or not b or a[-1] is not b[0]:
        raise KernelError(f"matmul of shapes {a} and {b}")
    n = a[-1]
    if len(a) == 2 and len(b) == 2:
        return lam([a[0], b[1]], lambda i, k: sum_over(n, lambda j: at(A, i, j) * at(B, j, k), A, B, i, k), A, B)
    if len(a) == 1 and len(b) == 2:
        return lam([b[1]], lambda k: sum_over(n, lambda j: at(A, j) * at(B, j, k), A, B, k), A, B)
    if len(a) == 2 and len(b) == 1:
        return lam([a[0]], lambda i: sum_over(n, lambda j: at(A, i, j) * at(B, j), A, B, i), A, B)
    if len(a) == 1 and len(b) == 1:
        return sum_over(n, lambda j: at(A, j) * at(B, j), A, B)
    raise KernelError(f"matmul of shapes {a} and {b}")


def _rowwise(X: T.Term, f):
    """Apply a vector function to each row of a matrix (or to a vector)."""
    if len(X.shape) == 1:
        return f(X)
    if len(X.shape) == 2:
        return _bind([X.shape[0]], lambda r: f(at(X, r)), T.Lamda, "iabpq")
    raise KernelError(f"row-wise operation on a rank-{len(X.shape)} term")


def total(x: T.Term) -> T.Term:
    """Sum of a vector's entries."""
    (n,) = x.shape
    return sum_over(n, lambda j: at(x, j), x)


def mean(x: T.Term) -> T.Term:
    (n,) = x.shape
    return total(x) / T.IntVal(n)


def vmax(x: T.Term) -> T.Term:
    (n,) = x.shape
    return _bind([n], lambda j: at(x, j), lambda vs, b: T.ReduceMax(vs[0], b), "jlm")


def softmax(X: T.Term, stable: bool = False) -> T.Term:
    """Row softmax; ``stable`` subtracts the row max first (which cancels exactly)."""
    def vec(x):
        (n,) = x.shape
        shift = vmax(x) if stable else None
        e = (lambda q: exp(at(x, q) - shift)) if stable else (lambda q: exp(at(x, q)))
        return lam([n], lambda i: e(i) / sum_over(n, e, x, i), x)
    return _rowwise(X, vec)


def log_softmax(X: T.Term) -> T.Term:
    def vec(x):
        (n,) = x.shape
        return lam([n], lambda i: at(x, i) - log(sum_over(n, lambda q: exp(at(x, q)), x, i)), x)
    return _rowwise(X, vec)


def layer_norm(X: T.Term, eps: T.Term, gamma: T.Term | None = None, beta: T.Term | None = None) -> T.Term:
    """Normalize over the last axis: ``(x - mean) / sqrt(var + eps)``, then the affine."""
    def vec(x):
        (n,) = x.shape
        mu = mean(x)
        var = sum_over(n, lambda q: (at(x, q) - mu) ** 2, x) / T.IntVal(n)
        r = rsqrt(var + eps)

        def entry(i):
            y = (at(x, i) - mu) * r
            if gamma is not None:
                y = y * at(gamma, i)
            if beta is not None:
                y = y + at(beta, i)
            return y
        return lam([n], entry, x)
    return _rowwise(X, vec)


def attention(Q: T.Term, K: T.Term, V: T.Term) -> T.Term:
    """Single-head scaled dot-product attention ``softmax(Q K^T / sqrt(d)) V``."""
    d = Q.shape[1]
    scores = lam([Q.shape[0], K.shape[0]],
                 lambda i, j: sum_over(d, lambda c: at(Q, i, c) * at(K, j, c), Q, K, i, j) * rsqrt(T.IntVal(d)),
                 Q, K)
    return matmul(softmax(scores), V)


def relu(x: T.Term) -> T.Term:
    return x * T.RealCond(x, ">")


def sigmoid(x: T.Term) -> T.Term:
    return T.Pow(1 + exp(-x), -1)


def gelu_tanh(x: T.Term) -> T.Term:
    c = sqrt(T.Num(2) / T.Const("pi"))
    return Fraction(1, 2) * x * (1 + tanh(c * (x + Fraction(44715, 1000000) * x ** 3)))


def gelu_erf(x: T.Term) -> T.Term:
    return Fraction(1, 2) * x * (1 + erf(x * rsqrt(T.Num(2))))


def silu(x: T.Term) -> T.Term:
    return x * sigmoid(x)


def elementwise(X: T.Term, f) -> T.Term:
    """``Lamda[I](f(X[I]))``."""
    if not X.shape:
        return f(X)
    return lam(X.shape, lambda *I: f(at(X, *I)), X)
