"""Tactics: untrusted proposals for rewriting an expression (a table from name to rule).

A tactic maps a node to a new node that should be equal to it (``definition`` unfolds a
definition, ``distribute`` multiplies out, ``as_Sum`` writes a product as its sum ...).
It proves nothing: the cursor that applies it (``cursor``) asks the kernel to prove
old = new, and a wrong proposal is a rejected step. A tactic may also name what to
rewrite with: a kernel theorem (``definition``: the symbol's definition) or the fact
it was given (``subs``).

The layer above statements and below facts: a tactic works on expressions only. The
arguments a theorem file hands it are used through what they offer: a fact's
``statement`` (``subs``), a cited theorem's ``rewrite_at`` (``apply``).
"""
from __future__ import annotations

import itertools

from verigrad.certify.normal_form import normal_form
from verigrad.kernel import KernelError, Theorem, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly

from .errors import ProofError
from .expressions import (SPARE_NAMES, Add, BlockMatrix, Bool, Call, Derivative, Expr, Identity, Indexed, IntSymbol,
                          KroneckerDelta, Lamda, MatMul, Max, Min, Mul, Number, Raw, Sum, Swap, TensorSymbol,
                          Transpose, Vjp, ZeroMatrix, as_expr, fresh_symbol, index_names, push_index, zeros)
from .statements import Statement


class TacticError(ProofError):
    """A tactic does not apply to the node it was asked to rewrite."""


# -- the tactics ----------------------------------------------------------------------------------

def t_definition(node: Expr, ctx):
    """Unfold a defined symbol (or an entry of one) or a defined function."""
    if isinstance(node, TensorSymbol) and node.definition is not None:
        return node.definition, node.definition_theorem
    if isinstance(node, Indexed) and isinstance(node.base, TensorSymbol) and node.base.definition is not None:
        return push_index(node.base.definition, node.indices), node.base.definition_theorem
    if isinstance(node, Call):
        return node.expand(), None
    if isinstance(node, Vjp):
        return _vjp_sum(node, ctx), None
    if isinstance(node, Indexed) and isinstance(node.base, Call):
        return push_index(node.base.expand(), node.indices), None
    raise TacticError(f"definition: {node} is not a defined symbol or function")


def _vjp_sum(node, ctx) -> Expr:
    """``vjp(f, x, dy) = Lamda[K](Sum[I](dy[I] * Derivative(f[I], x[K])))``."""
    f, x, dy = node.args
    avoid = [f, x, dy, *_names(ctx)]
    ks, is_ = [], []
    for n in x.shape:
        ks.append(fresh_symbol(n, *avoid, *ks, prefer="klmuvw"))
    for n in f.shape:
        is_.append(fresh_symbol(n, *avoid, *ks, *is_, prefer="ijpqab"))
    fi = push_index(f, is_) if is_ else f
    body = (dy[tuple(is_)] if is_ else dy) * Derivative(fi, x[tuple(ks)] if ks else x)
    if is_:
        body = Sum(body, [(i, n) for i, n in reversed(list(zip(is_, f.shape)))])
    if ks:
        return Lamda(body, [(k, n) for k, n in reversed(list(zip(ks, x.shape)))])
    return body


def _delta_form(e: Expr) -> Expr:
    """Entries of special matrices as Kronecker deltas, everywhere in ``e``."""
    if isinstance(e, Indexed) and len(e.indices) == len(e.base.shape):
        b = e.base
        if isinstance(b, BlockMatrix):
            return _delta_form(b.entry(list(e.indices)))
        if isinstance(b, Swap):
            return b.entry(*e.indices)
        if isinstance(b, Identity):
            return KroneckerDelta(*e.indices)
        if isinstance(b, ZeroMatrix):
            return Number(0)
    if isinstance(e, Bool) and e.op == "==":
        return KroneckerDelta(e.args[0], e.args[1])
    if not e.args:
        return e
    new = [_delta_form(a) for a in e.args]
    if all(a is b for a, b in zip(new, e.args)):
        return e
    return e.rebuild(new)


def t_as_KroneckerDelta(node, ctx):
    if isinstance(node, (Identity, Swap, BlockMatrix)):
        vs = []
        for n in node.shape:
            vs.append(fresh_symbol(n, node, *_names(ctx), *vs))
        return Lamda(_delta_form(Indexed(node, *vs)), [(v, n) for v, n in reversed(list(zip(vs, node.shape)))])
    out = _delta_form(node)
    if out == node:
        raise TacticError(f"as_KroneckerDelta: nothing to rewrite in {node}")
    return out


def _names(ctx):
    return ctx.statement_exprs()


def _product_as_sum(node: MatMul, ctx, name=None) -> Expr:
    """``A @ B @ ...`` written as sums over the contracted indices (left to right)."""
    out = node.args[0]
    for B in node.args[1:]:
        out = _pair_sum(out, B, ctx, name)
    return out


def _pair_sum(A, B, ctx, name):
    n = A.shape[-1]
    if name is not None and name not in {s for e in (A, B) for s in e.symbol_names()}:
        j = IntSymbol.bound(name, n)
    else:
        j = fresh_symbol(n, A, B, *_names(ctx), prefer="jklpq")
    ra, rb = len(A.shape), len(B.shape)
    if ra == 1:
        return Sum(push_index(A, [j]) * push_index(B, [j]), [(j, n)])
    if ra == 2 and rb == 1:
        i = fresh_symbol(A.shape[0], A, B, *_names(ctx), j, prefer="ipq")
        return Lamda(Sum(push_index(A, [i, j]) * push_index(B, [j]), [(j, n)]), [(i, A.shape[0])])
    if ra == 2 and rb == 2:
        i = fresh_symbol(A.shape[0], A, B, *_names(ctx), j, prefer="ipq")
        k = fresh_symbol(B.shape[1], A, B, *_names(ctx), j, i, prefer="kluvw")
        return Lamda(Sum(push_index(A, [i, j]) * push_index(B, [j, k]), [(j, n)]), [(k, B.shape[1]), (i, A.shape[0])])
    raise TacticError(f"as_Sum: a product of shapes {A.shape} and {B.shape}")


def t_as_Sum(node, ctx, free_symbol=None):
    if isinstance(node, MatMul):
        return _product_as_sum(node, ctx, _free_name(free_symbol))
    if isinstance(node, Sum):
        return node
    raise TacticError(f"as_Sum: {node} is not a product")


def _free_name(free_symbol):
    if free_symbol is None:
        return None
    if isinstance(free_symbol, (set, frozenset, list, tuple)):
        free_symbol = next(iter(free_symbol))
    return free_symbol.name if isinstance(free_symbol, IntSymbol) else str(free_symbol)


def _expand(e: Expr) -> Expr:
    """Multiply out products over sums, recursively."""
    if not e.args:
        return e
    e = e.rebuild([_expand(a) for a in e.args])
    if isinstance(e, (Mul, MatMul)):
        for k, f in enumerate(e.args):
            if isinstance(f, Add):
                cls = type(e)
                return _expand(Add(*[cls(*e.args[:k], t, *e.args[k + 1:]) for t in f.args], order=False))
    return e


def t_expand(node, ctx, free_symbol=None):
    if isinstance(node, MatMul) and (free_symbol is not None or all(len(a.shape) <= 1 for a in node.args[:1])):
        return _product_as_sum(node, ctx, _free_name(free_symbol))
    return _expand(node)


def t_distribute(node, ctx):
    if isinstance(node, (Mul, MatMul)):
        for k, f in enumerate(node.args):
            if isinstance(f, Add):
                cls = type(node)
                return Add(*[cls(*node.args[:k], t, *node.args[k + 1:]) for t in f.args], order=False)
    raise TacticError(f"distribute: {node} is not a product with a sum among its factors")


def _remove_factor(term: Expr, x: Expr):
    if term == x:
        return Number(1)
    if isinstance(term, Mul) and x in term.args:
        args = list(term.args)
        args.remove(x)
        return Mul(*args, order=False) if len(args) > 1 else args[0]
    return None


def t_collect(node, ctx, x):
    x = as_expr(x)
    if not isinstance(node, Add):
        raise TacticError(f"collect: {node} is not a sum")
    inside, outside = [], []
    for t in node.args:
        r = _remove_factor(t, x)
        (outside if r is None else inside).append(t if r is None else r)
    if len(inside) < 1:
        raise TacticError(f"collect: no term of {node} has the factor {x}")
    collected = Mul(x, Add(*inside, order=False), order=False)
    return Add(collected, *outside, order=False) if outside else collected


def _merge_sums(node: Add, ctx) -> Expr:
    sums = [a for a in node.args if isinstance(a, Sum) and len(a.limits) == 1]
    others = [a for a in node.args if not (isinstance(a, Sum) and len(a.limits) == 1)]
    if len(sums) < 2:
        raise TacticError(f"astype(Sum): {node} has fewer than two sums to merge")
    size = sums[0].limits[0][1]
    if any(s.limits[0][1] is not size for s in sums):
        raise TacticError("astype(Sum): the sums run over different ranges")
    name = min(s.variables[0].name for s in sums)
    j = IntSymbol.bound(name, size)
    bodies = [s.function.replace(s.variables[0], j) for s in sums]
    return Add(Sum(Add(*bodies, order=False), [(j, size)]), *others, order=False) if others else \
        Sum(Add(*bodies, order=False), [(j, size)])


def _push_into_minmax(node: Expr, cls) -> Expr:
    """``a + Min(b, c) -> Min(a + b, a + c)`` (and ``c * Min`` for a constant c >= 0)."""
    if isinstance(node, Add):
        mm = [a for a in node.args if isinstance(a, cls)]
        if mm:
            target = mm[0]
            rest = [a for a in node.args if a is not target]
            return cls(*[Add(*rest, b) for b in target.args])
    raise TacticError(f"astype({cls.__name__}): {node} is not a sum with a {cls.__name__} in it")


def t_astype(node, ctx, cls):
    if cls is Sum:
        if isinstance(node, Add):
            return _merge_sums(node, ctx)
        if isinstance(node, Mul):
            sums = [a for a in node.args if isinstance(a, Sum)]
            if len(sums) == 1:
                s = sums[0]
                rest = [a for a in node.args if a is not s]
                return Sum(Mul(*rest, s.function, order=False), s.limits)
        if isinstance(node, MatMul):
            return _product_as_sum(node, ctx)
        raise TacticError(f"astype(Sum): cannot write {node} as one sum")
    if cls in (Min, Max):
        return _push_into_minmax(node, cls)
    if cls is Add:
        return t_distribute(node, ctx)
    if cls is Lamda:
        shape = node.shape
        if not shape:
            raise TacticError("astype(Lamda) of a scalar")
        vs = []
        for n in shape:
            vs.append(fresh_symbol(n, node, *_names(ctx), *vs))
        return Lamda(push_index(node, vs), [(v, n) for v, n in reversed(list(zip(vs, shape)))])
    raise TacticError(f"astype({getattr(cls, '__name__', cls)}) is not known")


def _beta(e: Expr) -> Expr:
    if not e.args:
        return e
    e = e.rebuild([_beta(a) for a in e.args])
    if isinstance(e, Indexed) and isinstance(e.base, (Lamda, MatMul, Add, Mul, Transpose)) and not e.total:
        return push_index(e.base, e.indices)
    return e


def _sift(e: Expr) -> Expr:
    """``Sum[j](KroneckerDelta(j, a) f(j)) -> f(a)`` (the kernel checks the range)."""
    if not e.args:
        return e
    e = e.rebuild([_sift(a) for a in e.args])
    if isinstance(e, Sum) and len(e.limits) == 1:
        j = e.variables[0]
        body = e.function
        factors = list(body.args) if isinstance(body, Mul) else [body]
        for f in factors:
            if isinstance(f, KroneckerDelta):
                a, b = f.args
                other = b if a == j else a if b == j else None
                if other is not None and not other.has(j):
                    rest = [g for g in factors if g is not f]
                    out = Mul(*rest) if rest else Number(1)
                    return out.replace(j, other)
    return e


def zero_if_zero(e: Expr) -> Expr:
    """``0`` for an expression the kernel shows is zero (SymPy would cancel it)."""
    z = zeros(e.shape)
    try:
        res = prove_equal(e.term, z.term)
    except (KernelError, ProofError):
        return e
    return z if isinstance(res, Theorem) else e


def t_simplify(node, ctx):
    """Beta-reduce entries of comprehensions, sift Kronecker deltas out of sums, and
    write 0 for what the kernel shows is zero."""
    out = _sift(_beta(node))
    return zero_if_zero(out)


def readable(t: T.Term) -> T.Term:
    """``t`` with the kernel's internal index names (``k_15``, ``_1_0``) renamed to
    letters the term does not use, and ``delta(a - b, 0)`` written ``delta(a, b)``: an
    alpha-equivalent term for display (the kernel checks the equality anyway)."""
    used = set(index_names(t))
    letters = iter([c for c in itertools.chain("ijklpqrstuvwabcdefgh", SPARE_NAMES) if c not in used])

    def rename(v):
        if v.tag or "_" in v.name:
            w = IndexVar(next(letters), v.size)
            return w, {v: Poly.sym(w)}
        return v, {}

    def go(x):
        if isinstance(x, (T.Lamda, T.Sum, T.ReduceMax)):
            vs = x.idxs if isinstance(x, T.Lamda) else (x.idx,)
            new, mp = [], {}
            for v in vs:
                w, m = rename(v)
                new.append(w)
                mp.update(m)
            body = go(T.subst(x.body, mp) if mp else x.body)
            if isinstance(x, T.Lamda):
                return T.Lamda(new, body)
            return type(x)(new[0], body, *x._args[2:])
        if isinstance(x, T.Delta) and x.b is Poly.const(0):
            pos = Poly({m: c for m, c in x.a.terms.items() if c > 0})
            return T.Delta(pos, pos - x.a)
        if isinstance(x, T.Term) and x._args:
            return T.map_args(x, go)
        return x
    return go(t)


def t_doit(node, ctx):
    """Carry out derivatives and comprehension entries: the kernel's normal form of a
    derivative, beta-reduction elsewhere."""
    if any(isinstance(n, (Derivative, Vjp)) for n in node.walk()):
        return Raw(readable(normal_form(node.term)))
    out = _beta(node)
    if out == node:
        raise TacticError(f"doit: nothing to do in {node}")
    return out


def t_subs(node, ctx, eq, new=None):
    """Replace ``eq.lhs`` by ``eq.rhs`` for a fact ``eq`` (rewriting with the fact), or
    the expression ``eq`` by ``new``."""
    if isinstance(getattr(eq, "statement", None), Statement):
        out = node.replace(eq.statement.lhs, eq.statement.rhs)
        if out is node or out == node:
            raise TacticError(f"subs: {eq.statement.lhs} does not occur in {node}")
        return out, eq
    out = node.replace(as_expr(eq), as_expr(new))
    if out == node:
        raise TacticError(f"subs: {eq} does not occur in {node}")
    return out


def t_become(node, ctx, new):
    """A hand-written replacement: the kernel must show ``node = new``."""
    new = as_expr(new)
    if new.shape != node.shape:
        raise TacticError(f"{new} has another shape than {node}")
    return new


def t_apply(node, ctx, theorem, *args):
    """Rewrite ``node`` with a cited theorem's equation ``lhs = rhs`` (instantiated):
    ``theorem`` is a theorem module or its ``apply``, which does the citing."""
    stmt = theorem if hasattr(theorem, "rewrite_at") else getattr(theorem, "apply", theorem)
    if not hasattr(stmt, "rewrite_at"):
        raise ProofError(f"apply: {stmt!r} is not a theorem")
    return stmt.rewrite_at(node, args)


TACTICS = {
    "definition": (t_definition, True),        # (rule, is a property)
    "as_KroneckerDelta": (t_as_KroneckerDelta, False),
    "expand": (t_expand, False),
    "distribute": (t_distribute, False),
    "collect": (t_collect, False),
    "as_Sum": (t_as_Sum, False),
    "astype": (t_astype, False),
    "doit": (t_doit, False),
    "simplify": (t_simplify, False),
    "subs": (t_subs, False),
    "become": (t_become, False),
    "apply": (t_apply, False),
}
