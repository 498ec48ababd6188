"""One rule per StableHLO operation: its meaning as a kernel term (untrusted).

Every SSA value is a *closed* term of the value's concrete shape: element-wise
operations act on whole tensors (``a + b``, ``exp(a)``), structural ones build a
``Lamda`` whose body reads the (closed) operands at index expressions, e.g.
``transpose(x)[i, j] = x[j, i]``. Closed values keep binders from capturing each
other and let the numeric evaluator compute each intermediate tensor once.

Conventions (all exact over the reals):
- booleans (``i1``) are 0/1 indicators; ``compare`` gives ``[a - b > 0]`` and the like,
  ``select(p, a, b) = p a + (1 - p) b``;
- ``max(a, b) = b + (a - b)[a - b > 0]``, so ``max(x, 0) = x [x > 0]``, the kernel's
  relu;
- integers are reals that happen to be integral (``iota`` is ``IntVal`` of an index);
- a float literal denotes the shortest decimal that rounds to it (``0.1f`` is 1/10);
- ``-inf`` (``+inf``) is accepted only as the identity of ``max`` (``min``): the
  initial value of a reduction, or an operand of ``maximum`` (``minimum``);
- ``is_finite`` is 1 and ``reduce_precision`` the identity: every real is finite, and
  rounding is below the level of the real-number semantics.
"""
from __future__ import annotations

from fractions import Fraction
from math import prod

import numpy as np

from verigrad.kernel import (Delta, Func, Index, IndexVar, IntCond, IntVal, Lamda, Num, Pow, RealCond,
                             ReduceMax, Sum, Term, Var)
from verigrad.kernel.sizes import as_poly

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as _sh

from .stablehlo import StableHLOError, tensor_spec, where

_OUT = "ijklmopq"       # indices of a result
_RED = "rstuvwxyz"      # indices summed over

# Dense constants with more entries than this become named variables with a value.
MAX_LITERAL_ENTRIES = 256


class Infinity:
    """A non-finite constant of a shape: ``sign`` +1 or -1 for +-inf, 0 for NaN. Not a
    real: an infinity may be the identity of max / min, and either may be the branch
    of a ``select`` whose predicate is constant and picks the other branch (as in
    ``jnp.var``'s ``where(n > ddof, s / (n - ddof), nan)``)."""

    def __init__(self, sign: int, shape: tuple):
        self.sign, self.shape = sign, tuple(shape)

    def __repr__(self):
        return ("nan" if self.sign == 0 else f"{'+' if self.sign > 0 else '-'}inf") + str(list(self.shape))


# -- small constructors ---------------------------------------------------------------------

def indices(shape, letters=_OUT, start=0):
    return [IndexVar(letters[k] if k < len(letters) else f"{letters[0]}{k}", as_poly(s))
            for k, s in enumerate(shape, start)]


def tensor(shape, body):
    """``Lamda[I](body(*I))`` over ``shape`` (the body itself for a scalar)."""
    if not shape:
        return body()
    idx = indices(shape)
    return Lamda(idx, body(*idx))


def sums(shape, body):
    """``Sum[r](Sum[s](... body(r, s, ...)))`` over ``shape``."""
    idx = indices(shape, _RED)
    out = body(*idx)
    for v in reversed(idx):
        out = Sum(v, out)
    return out


def read(x: Term, idx, total=False) -> Term:
    return Index(x, tuple(idx), total=total) if idx else x


def splat(value: Fraction, shape) -> Term:
    return tensor(shape, lambda *_: Num(value))


def splat_value(t):
    """The constant every entry of ``t`` equals, when ``t`` is a literal splat."""
    while isinstance(t, Lamda):
        t = t.body
    return t.value if isinstance(t, Num) else None


def add(a, b):
    if splat_value(b) == 0:
        return a
    if splat_value(a) == 0:
        return b
    return a + b


def sub(a, b):
    return a if splat_value(b) == 0 else a - b


def mul(a, b):
    if splat_value(b) == 1:
        return a
    if splat_value(a) == 1:
        return b
    return a * b


def indicator(t, rel):
    return RealCond(t, rel)


def maximum(a, b):
    d = sub(a, b)
    return add(b, d * indicator(d, ">"))


def minimum(a, b):
    d = sub(a, b)
    return add(b, d * indicator(d, "<"))


# -- the operation view ---------------------------------------------------------------------

class Op:
    """One operation: its attributes, result types and ``path:line:col``."""

    def __init__(self, op, interp):
        self.op = op.operation
        self.interp = interp
        self.name = self.op.name
        self.where = where(interp.parsed.path, self.op.location)
        self.outs = [tensor_spec(r.type, self.where) for r in self.op.results]
        self.in_specs = [tensor_spec(v.type, self.where) for v in self.op.operands]

    @property
    def out(self):
        return self.outs[0]

    def has(self, key):
        return key in self.op.attributes

    def attr(self, key):
        return self.op.attributes[key]

    def ints(self, key, default=None):
        if key not in self.op.attributes:
            if default is None:
                raise StableHLOError(f"{self.where}: {self.name} has no attribute {key}")
            return list(default)
        a = self.op.attributes[key]
        if isinstance(a, ir.DenseI64ArrayAttr):
            return [int(v) for v in ir.DenseI64ArrayAttr(a)]
        if isinstance(a, ir.DenseBoolArrayAttr):
            return [bool(v) for v in ir.DenseBoolArrayAttr(a)]
        if isinstance(a, ir.DenseIntElementsAttr):
            return np.array(ir.DenseIntElementsAttr(a)).astype(int).tolist()
        raise StableHLOError(f"{self.where}: attribute {key} of {self.name} is not a list of integers: {a}")

    def fail(self, why):
        raise StableHLOError(f"{self.where}: {self.name}: {why}")


# -- rules ------------------------------------------------------------------------------------

RULES: dict = {}


def rule(*names, infinity=False):
    """Register ``f(op, *operands) -> value or list of values`` for ``names``;
    ``infinity`` rules may receive ``Infinity`` operands."""
    def deco(f):
        for n in names:
            RULES[n] = (f, infinity)
        return f
    return deco


def _unary(name, f):
    rule(name)(lambda op, x: f(x))


_unary("stablehlo.negate", lambda x: -x)
_unary("stablehlo.exponential", lambda x: Func("exp", (x,)))
_unary("stablehlo.exponential_minus_one", lambda x: Func("exp", (x,)) - 1)
_unary("stablehlo.log", lambda x: Func("log", (x,)))
_unary("stablehlo.log_plus_one", lambda x: Func("log", (1 + x,)))
_unary("stablehlo.tanh", lambda x: Func("tanh", (x,)))
_unary("chlo.erf", lambda x: Func("erf", (x,)))
_unary("chlo.square", lambda x: x * x)
_unary("chlo.erfc", lambda x: 1 - Func("erf", (x,)))
_unary("stablehlo.logistic", lambda x: Pow(1 + Func("exp", (-x,)), -1))
_unary("stablehlo.sqrt", lambda x: Pow(x, Fraction(1, 2)))
_unary("stablehlo.rsqrt", lambda x: Pow(x, Fraction(-1, 2)))
_unary("stablehlo.abs", lambda x: x * indicator(x, ">") - x * indicator(x, "<"))
_unary("stablehlo.sign", lambda x: indicator(x, ">") - indicator(x, "<"))
_unary("stablehlo.not", lambda x: 1 - x)
_unary("stablehlo.reduce_precision", lambda x: x)
_unary("stablehlo.is_finite", lambda x: x * 0 + 1)

rule("stablehlo.add")(lambda op, a, b: add(a, b))
rule("stablehlo.subtract")(lambda op, a, b: sub(a, b))
rule("stablehlo.multiply")(lambda op, a, b: mul(a, b))
rule("stablehlo.divide")(lambda op, a, b: mul(a, Pow(b, -1)))


@rule("stablehlo.and")
def _and(op, a, b):
    if op.out.dtype != "i1":
        op.fail("bitwise and of integers is not supported (only of booleans)")
    return a * b


@rule("stablehlo.or")
def _or(op, a, b):
    if op.out.dtype != "i1":
        op.fail("bitwise or of integers is not supported (only of booleans)")
    return a + b - a * b


@rule("stablehlo.xor")
def _xor(op, a, b):
    if op.out.dtype != "i1":
        op.fail("bitwise xor of integers is not supported (only of booleans)")
    return a + b - 2 * a * b


@rule("stablehlo.maximum", "stablehlo.minimum", infinity=True)
def _max_min(op, a, b):
    big = op.name.endswith("maximum")
    inf = [x for x in (a, b) if isinstance(x, Infinity)]
    if any(x.sign == 0 for x in inf):
        op.fail("an operand is NaN")
    if inf:
        x = inf[0]
        other = b if x is a else a
        if (x.sign > 0) == big:           # max(+inf, y) = +inf
            return Infinity(x.sign, op.out.shape)
        if isinstance(other, Infinity):
            return Infinity(other.sign, op.out.shape)
        return other                      # max(-inf, y) = y
    return maximum(a, b) if big else minimum(a, b)


@rule("stablehlo.clamp")
def _clamp(op, lo, x, hi):
    return minimum(maximum(x, lo), hi)


@rule("stablehlo.power")
def _power(op, x, y):
    e = splat_value(y)
    if e is None:
        op.fail("the exponent must be a constant (x ** y with a variable y is not supported)")
    return Pow(x, e)


_RELS = {"GT": ">", "GE": ">=", "LT": "<", "LE": "<="}


@rule("stablehlo.compare")
def _compare(op, a, b):
    direction = _sh.ComparisonDirectionAttr(op.attr("comparison_direction")).value
    d = sub(a, b)
    if direction in _RELS:
        return indicator(d, _RELS[direction])
    eq = indicator(d, ">=") - indicator(d, ">")
    if direction == "EQ":
        return eq
    if direction == "NE":
        return 1 - eq
    op.fail(f"unknown comparison {direction}")


@rule("stablehlo.select", infinity=True)
def _select(op, p, a, b):
    if isinstance(a, Infinity) or isinstance(b, Infinity):
        picked = _constant_predicate(op, p)
        return a if picked else b
    return add(mul(p, a), mul(1 - p, b))


def _constant_predicate(op, p):
    """The value (True / False) of a predicate that mentions no variable, where every
    entry agrees; else an error (a non-finite branch could be taken)."""
    if isinstance(p, Infinity) or p.atoms or p.free_idx:
        op.fail("a non-finite branch under a predicate that is not constant")
    from verigrad.certify.evaluate import evaluate
    v = np.asarray(evaluate(p, {}, {}))
    if not (np.all(v == 1) or np.all(v == 0)):
        op.fail("a non-finite branch under a predicate that is not constant")
    return bool(np.all(v == 1))


@rule("stablehlo.convert", infinity=True)
def _convert(op, x):
    if isinstance(x, Infinity):
        if not op.out.is_float:
            op.fail(f"conversion of {x} to {op.out.dtype}")
        return Infinity(x.sign, op.out.shape)
    src = op.in_specs[0]
    if src.is_float and not op.out.is_float:
        op.fail(f"conversion from {src.dtype} to {op.out.dtype} rounds; only conversions that keep the value are supported")
    return x


@rule("stablehlo.constant")
def _constant(op):
    attr = ir.DenseElementsAttr(op.attr("value"))
    spec = op.out
    if attr.is_splat:
        v = _literal(attr.get_splat_value(), spec, op)
        if isinstance(v, Infinity):
            return Infinity(v.sign, spec.shape)
        return splat(v, spec.shape)
    values = np.array(attr)
    if values.dtype == np.bool_ or spec.dtype == "i1":
        values = values.astype(np.int64)
    if not np.all(np.isfinite(values)):
        op.fail("a dense constant with non-finite entries is not supported")
    if values.size > MAX_LITERAL_ENTRIES:
        var = Var(f"const@{op.where.rsplit(':', 2)[-2]}:{op.where.rsplit(':', 1)[-1]}", spec.shape)
        op.interp.constants[var] = values.astype(np.float64)
        return var
    flat = [_number(float(v) if spec.is_float else int(v), spec) for v in values.reshape(-1)]

    def body(*I):
        strides = [prod(spec.shape[k + 1:]) for k in range(len(spec.shape))]
        terms = []
        for pos, v in enumerate(flat):
            if v == 0:
                continue
            t = Num(v)
            for k, i in enumerate(I):
                t = t * Delta(i, (pos // strides[k]) % spec.shape[k])
            terms.append(t)
        if not terms:
            return Num(0)
        return terms[0] if len(terms) == 1 else sum(terms[1:], terms[0])
    return tensor(spec.shape, body)


def _number(v, spec):
    if isinstance(v, float):
        return Fraction(str(spec.np_dtype.type(v)))
    return Fraction(int(v))


def _literal(a, spec, op):
    if isinstance(a, ir.FloatAttr):
        v = ir.FloatAttr(a).value
        if np.isnan(v):
            return Infinity(0, spec.shape)
        if np.isinf(v):
            return Infinity(1 if v > 0 else -1, spec.shape)
        return _number(v, spec)
    if isinstance(a, ir.IntegerAttr):
        return Fraction(ir.IntegerAttr(a).value if spec.dtype != "i1" else int(ir.IntegerAttr(a).value != 0))
    if isinstance(a, ir.BoolAttr):
        return Fraction(int(ir.BoolAttr(a).value))
    op.fail(f"unsupported constant {a}")


@rule("stablehlo.iota")
def _iota(op):
    dim = ir.IntegerAttr(op.attr("iota_dimension")).value
    return tensor(op.out.shape, lambda *I: IntVal(I[dim]))


# -- shape ------------------------------------------------------------------------------------

def _reshaped(op, x, body):
    """Apply a structural rule, passing infinities through with the new shape."""
    if isinstance(x, Infinity):
        return Infinity(x.sign, op.out.shape)
    return body()


@rule("stablehlo.broadcast_in_dim", infinity=True)
def _broadcast_in_dim(op, x):
    dims = op.ints("broadcast_dimensions")
    shape = op.in_specs[0].shape

    def body(*I):
        return read(x, [I[d] if shape[k] == op.out.shape[d] else 0 for k, d in enumerate(dims)])
    return _reshaped(op, x, lambda: tensor(op.out.shape, body))


@rule("stablehlo.reshape", infinity=True)
def _reshape(op, x):
    src = op.in_specs[0].shape

    def body(*I):
        flat = as_poly(0)
        for k, i in enumerate(I):
            flat = flat + i * prod(op.out.shape[k + 1:])
        idx = []
        for k, n in enumerate(src):
            stride = prod(src[k + 1:])
            e = flat // stride if stride > 1 else flat
            idx.append(e % n if k > 0 else e)
        return read(x, idx)
    return _reshaped(op, x, lambda: tensor(op.out.shape, body))


@rule("stablehlo.transpose", infinity=True)
def _transpose(op, x):
    perm = op.ints("permutation")

    def body(*I):
        J = [None] * len(perm)
        for k, p in enumerate(perm):
            J[p] = I[k]
        return read(x, J)
    return _reshaped(op, x, lambda: tensor(op.out.shape, body))


@rule("stablehlo.reverse")
def _reverse(op, x):
    dims, shape = op.ints("dimensions"), op.in_specs[0].shape
    return tensor(shape, lambda *I: read(x, [shape[d] - 1 - i if d in dims else i for d, i in enumerate(I)]))


@rule("stablehlo.slice")
def _slice(op, x):
    start, strides = op.ints("start_indices"), op.ints("strides")
    return tensor(op.out.shape, lambda *I: read(x, [s + t * i for s, t, i in zip(start, strides, I)]))


@rule("stablehlo.concatenate")
def _concatenate(op, *xs):
    dim = ir.IntegerAttr(op.attr("dimension")).value

    def body(*I):
        parts, off = [], 0
        for x, spec in zip(xs, op.in_specs):
            idx = list(I)
            idx[dim] = I[dim] - off
            parts.append(read(x, idx, total=True))
            off += spec.shape[dim]
        return parts[0] if len(parts) == 1 else sum(parts[1:], parts[0])
    return tensor(op.out.shape, body)


@rule("stablehlo.pad")
def _pad(op, x, value):
    lo, interior = op.ints("edge_padding_low"), op.ints("interior_padding")
    shape = op.in_specs[0].shape

    def body(*I):
        idx, inside = [], Num(1)
        for i, l, s, n in zip(I, lo, interior, shape):
            e = i - l
            if s:
                inside = inside * Delta(e % (s + 1), 0)
                e = e // (s + 1)
            idx.append(e)
            inside = inside * IntCond(e, ">=", 0) * IntCond(e, "<", n)
        v = read(x, idx, total=True)      # reads 0 off the operand
        if splat_value(value) == 0:
            return v * inside if any(interior) else v
        return v * inside + value * (1 - inside)
    return tensor(op.out.shape, body)


@rule("stablehlo.custom_call")
def _custom_call(op, *xs):
    target = ir.StringAttr(op.attr("call_target_name")).value
    if target in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape") and len(xs) == 1 \
            and op.in_specs[0].shape == op.out.shape:
        return xs[0]    # a sharding annotation: the identity on values
    op.fail(f"custom_call @{target} is not supported (only sharding annotations are)")


rule("sdy.sharding_constraint")(lambda op, x: x)
rule("stablehlo.optimization_barrier")(lambda op, *xs: list(xs))


# -- contractions -------------------------------------------------------------------------------

@rule("stablehlo.dot_general")
def _dot_general(op, a, b):
    dn = _sh.DotDimensionNumbers(op.attr("dot_dimension_numbers"))
    lb, rb = list(dn.lhs_batching_dimensions), list(dn.rhs_batching_dimensions)
    lc, rc = list(dn.lhs_contracting_dimensions), list(dn.rhs_contracting_dimensions)
    sa, sb = op.in_specs[0].shape, op.in_specs[1].shape
    lf = [d for d in range(len(sa)) if d not in lb + lc]
    rf = [d for d in range(len(sb)) if d not in rb + rc]

    def body(*I):
        batch, lfree, rfree = I[:len(lb)], I[len(lb):len(lb) + len(lf)], I[len(lb) + len(lf):]

        def term(*C):
            ia, ib = [None] * len(sa), [None] * len(sb)
            for d, i in zip(lb, batch):
                ia[d] = i
            for d, i in zip(rb, batch):
                ib[d] = i
            for d, i in zip(lf, lfree):
                ia[d] = i
            for d, i in zip(rf, rfree):
                ib[d] = i
            for d, e, c in zip(lc, rc, C):
                ia[d], ib[e] = c, c
            return read(a, ia) * read(b, ib)
        return sums([sa[d] for d in lc], term) if lc else term()
    return tensor(op.out.shape, body)


@rule("stablehlo.dot")
def _dot(op, a, b):
    sa, sb = op.in_specs[0].shape, op.in_specs[1].shape
    if len(sa) == 2 and len(sb) == 2:
        return tensor(op.out.shape, lambda i, k: sums([sa[1]], lambda r: read(a, [i, r]) * read(b, [r, k])))
    if len(sa) == 2 and len(sb) == 1:
        return tensor(op.out.shape, lambda i: sums([sa[1]], lambda r: read(a, [i, r]) * read(b, [r])))
    if len(sa) == 1 and len(sb) == 2:
        return tensor(op.out.shape, lambda k: sums([sa[0]], lambda r: read(a, [r]) * read(b, [r, k])))
    return sums([sa[0]], lambda r: read(a, [r]) * read(b, [r]))


def _monoid(op, region):
    """``add``, ``maximum`` or ``minimum``: the body of a reduction, which must apply
    that one operation to its two arguments."""
    block = region.blocks[0]
    ops = list(block.operations)
    args = list(block.arguments)
    if len(ops) != 2 or len(args) != 2:
        op.fail("the reduction body must be one binary operation (add, maximum or minimum)")
    body, ret = ops[0].operation, ops[1].operation
    kinds = {"stablehlo.add": "add", "stablehlo.maximum": "max", "stablehlo.minimum": "min"}
    if body.name not in kinds:
        op.fail(f"a reduction by {body.name} is not supported (only add, maximum, minimum)")
    if set(body.operands) != set(args) or len(list(ret.operands)) != 1 or ret.operands[0] != body.results[0]:
        op.fail("the reduction body must return its operation applied to its two arguments")
    return kinds[body.name]


def _combine(op, kind, init, reduced, shape):
    """``init (+|max|min) reduced`` with the identities dropped."""
    if kind == "add":
        if isinstance(init, Infinity):
            op.fail("an infinite initial value of a sum")
        return add(init, reduced)         # a scalar init broadcasts
    if isinstance(init, Infinity):
        if (init.sign < 0) != (kind == "max"):
            op.fail(f"{kind} with initial value {init}: the result is that constant")
        return reduced
    return maximum(reduced, init) if kind == "max" else minimum(reduced, init)


@rule("stablehlo.reduce", infinity=True)
def _reduce(op, *args):
    if len(args) != 2:
        op.fail("a reduction of several operands at once is not supported")
    x, init = args
    if isinstance(x, Infinity):
        op.fail("reduction of a non-finite constant")
    kind = _monoid(op, op.op.regions[0])
    dims = op.ints("dimensions")
    shape = op.in_specs[0].shape
    keep = [d for d in range(len(shape)) if d not in dims]

    def body(*I):
        def entry(*R):
            idx = [None] * len(shape)
            for d, i in zip(keep, I):
                idx[d] = i
            for d, r in zip(dims, R):
                idx[d] = r
            return read(x, idx)
        if kind == "add":
            return sums([shape[d] for d in dims], entry)
        R = indices([shape[d] for d in dims], _RED)
        out = entry(*R)
        for v in reversed(R):
            out = ReduceMax(v, out, kind)
        return out
    reduced = tensor(op.out.shape, body)
    return _combine(op, kind, init, reduced, op.out.shape)


@rule("stablehlo.reduce_window", infinity=True)
def _reduce_window(op, x, init):
    if isinstance(x, Infinity):
        op.fail("reduction of a non-finite constant")
    kind = _monoid(op, op.op.regions[0])
    shape = op.in_specs[0].shape
    n = len(shape)
    window = op.ints("window_dimensions")
    strides = op.ints("window_strides", [1] * n)
    base = op.ints("base_dilations", [1] * n)
    wdil = op.ints("window_dilations", [1] * n)
    pad = op.ints("padding", [[0, 0]] * n)
    padded = any(p != [0, 0] for p in pad) or any(b != 1 for b in base)
    if kind != "add" and padded:
        op.fail("max / min pooling with padding or base dilation is not supported")

    def body(*I):
        def entry(*K):
            idx, inside = [], Num(1)
            for i, k, s, w, b, (lo, _) in zip(I, K, strides, wdil, base, pad):
                e = i * s + k * w - lo
                if b != 1:
                    inside = inside * Delta(e % b, 0)
                    e = e // b
                idx.append(e)
            v = read(x, idx, total=padded)
            return v * inside if any(b != 1 for b in base) else v
        if kind == "add":
            return sums(window, entry)
        K = indices(window, _RED)
        out = entry(*K)
        for v in reversed(K):
            out = ReduceMax(v, out, kind)
        return out
    reduced = tensor(op.out.shape, body)
    if kind == "add" and splat_value(init) != 0 and padded:
        op.fail("a windowed sum with padding and a nonzero initial value is not supported")
    return _combine(op, kind, init, reduced, op.out.shape)


@rule("stablehlo.convolution")
def _convolution(op, lhs, rhs):
    """``out[b, o, y] = sum_{c, k} lhs'[b, g C' + c, y s + k d] rhs[c, o, k]`` where
    ``lhs'`` is ``lhs`` dilated and padded and ``g`` the group of ``o``."""
    dn = _sh.ConvDimensionNumbers(op.attr("dimension_numbers"))
    sl, sr = op.in_specs[0].shape, op.in_specs[1].shape
    ib, if_, isp = dn.input_batch_dimension, dn.input_feature_dimension, list(dn.input_spatial_dimensions)
    ki, ko, ksp = dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension, list(dn.kernel_spatial_dimensions)
    ob, of, osp = dn.output_batch_dimension, dn.output_feature_dimension, list(dn.output_spatial_dimensions)
    ns = len(isp)
    strides = op.ints("window_strides", [1] * ns)
    pad = op.ints("padding", [[0, 0]] * ns)
    ldil = op.ints("lhs_dilation", [1] * ns)
    rdil = op.ints("rhs_dilation", [1] * ns)
    rev = op.ints("window_reversal", [False] * ns)
    fgc = ir.IntegerAttr(op.attr("feature_group_count")).value
    bgc = ir.IntegerAttr(op.attr("batch_group_count")).value
    out_feat = op.out.shape[of]
    cin = sr[ki]                         # input features per group
    window = [sr[d] for d in ksp]

    def body(*I):
        b, o = I[ob], I[of]
        ys = [I[d] for d in osp]

        def entry(c, *K):
            il, ir_ = [None] * len(sl), [None] * len(sr)
            inside = Num(1)
            g_f = o // (out_feat // fgc) if fgc > 1 else 0
            g_b = o // (out_feat // bgc) if bgc > 1 else 0
            il[ib] = b + g_b * (sl[ib] // bgc) if bgc > 1 else b
            il[if_] = g_f * cin + c if fgc > 1 else c
            ir_[ki], ir_[ko] = c, o
            for k in range(ns):
                kk = (window[k] - 1 - K[k]) if rev[k] else K[k]
                e = ys[k] * strides[k] + K[k] * rdil[k] - pad[k][0]
                if ldil[k] != 1:
                    inside = inside * Delta(e % ldil[k], 0)
                    e = e // ldil[k]
                il[isp[k]] = e
                ir_[ksp[k]] = kk
            v = read(lhs, il, total=True) * read(rhs, ir_)
            return v * inside if any(d != 1 for d in ldil) else v
        return sums([cin] + window, entry)
    return tensor(op.out.shape, body)


# -- the interpreter ----------------------------------------------------------------------------

class Interpreter:
    """Runs functions of a parsed module over terms; ``func.call`` is inlined."""

    def __init__(self, parsed):
        self.parsed = parsed
        self.constants: dict = {}
        self.current = parsed.path
        self.stack: list = []

    def call(self, fn, args):
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        if name in self.stack:
            raise StableHLOError(f"{where(self.parsed.path, fn.location)}: @{name} calls itself; recursion is not supported")
        self.stack.append(name)
        try:
            return self.run_block(fn.regions[0].blocks[0], args)
        finally:
            self.stack.pop()

    def run_block(self, block, args):
        env = dict(zip(block.arguments, args))
        for raw in block.operations:
            op = Op(raw, self)
            self.current = op.where
            operands = [env[v] for v in op.op.operands]
            if op.name in ("func.return", "stablehlo.return"):
                return operands
            if op.name == "func.call":
                callee = ir.FlatSymbolRefAttr(op.attr("callee")).value
                fn = self.parsed.functions.get(callee)
                if fn is None:
                    op.fail(f"calls the undefined function @{callee}")
                results = self.call(fn, operands)
            else:
                results = self.apply(op, operands)
            for v, r in zip(op.op.results, results):
                env[v] = r
        raise StableHLOError(f"{self.current}: a block without a return")

    def apply(self, op, operands):
        try:
            f, infinity = RULES[op.name]
        except KeyError:
            raise StableHLOError(f"{op.where}: unsupported operation {op.name}") from None
        if not infinity:
            for x in operands:
                if isinstance(x, Infinity):
                    op.fail(f"uses the non-finite constant {x}; infinities are supported only as the identity of max / min")
        out = f(op, *operands)
        results = out if isinstance(out, list) else [out]
        if len(results) != len(op.outs):
            op.fail(f"the rule gave {len(results)} results for {len(op.outs)}")
        for r, spec in zip(results, op.outs):
            got = r.shape if isinstance(r, Infinity) else tuple(int(s.const_value()) for s in r.shape)
            if tuple(got) != spec.shape:
                op.fail(f"the importer built shape {tuple(got)} for a result of type {spec}")
        return results

