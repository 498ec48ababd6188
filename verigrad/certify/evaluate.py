"""Numeric meaning of kernel terms (untrusted; an independent oracle for the kernel).

``evaluate(term, sizes, values)`` computes a term in float64 at concrete sizes, with
the kernel's total conventions (``0^-1 = 0``, ``log x = log|x|``, an index off the
shape reads 0). Derivatives are central finite differences, so this shares no code
with the kernel's normal form: when the kernel proves ``a = b``, the two evaluations
must agree, which is what the soundness tests and the counterexample search rely on.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

from verigrad.kernel import terms as T
from verigrad.kernel.permutation import Argsort, IntDiv, IntEq
from verigrad.kernel.sizes import FloorDiv, IndexVar, Poly, SizeSym
from verigrad.errors import VerigradError
from .conventions import FUNCTIONS, function, power


class EvalError(VerigradError):
    pass


def ival(p: Poly, env: dict) -> int:
    """The value of an integer expression given values for its symbols."""
    total = 0
    for m, c in p.terms.items():
        v = c
        for s, k in m:
            if isinstance(s, FloorDiv):
                val = ival(s.a, env) // ival(s.m, env)
            else:
                try:
                    val = env[s]
                except KeyError:
                    raise EvalError(f"no value for {s.name}") from None
            v *= val ** k
        total += v
    return total


def concrete_shape(shape, sizes: dict) -> tuple:
    return tuple(int(ival(s, sizes)) for s in shape)


def random_values(term_or_vars, sizes: dict, rng: np.random.Generator, scale: float = 1.0) -> dict:
    """Random float64 values for every variable of a term (positive where the
    variable's facts say so)."""
    vars_ = term_or_vars.atoms if isinstance(term_or_vars, T.Term) else term_or_vars
    out = {}
    # in name order: the draws must not depend on a set's (hash-seeded) iteration order
    for v in sorted((v for v in vars_ if isinstance(v, T.Var)), key=lambda v: (v.name, v.skey)):
        shp = concrete_shape(v.shape, sizes)
        x = rng.standard_normal(shp) * scale
        if "integer" in v.facts:       # integer data: integer values, negative ones included
            x = np.round(x * 3)
            if "positive" in v.facts:
                x = np.abs(x) + 1
            elif "nonneg" in v.facts:
                x = np.abs(x)
        elif "positive" in v.facts or "nonneg" in v.facts:
            x = np.abs(x) + 0.1
        elif "nonzero" in v.facts:
            x = np.where(np.abs(x) < 0.1, 0.5, x)
        out[v] = np.asarray(x, dtype=np.float64)
    return out


PEAK_CAP = 4_000_000     # entries of the largest array one evaluation may build (about 32 MB)
BATCH_CAP = 1_500_000    # a batch of draws is evaluated together while this fits


def peak_cost(terms):
    """``cost(sizes)``: the entries of the largest array the vectorized evaluator builds
    for ``terms`` at ``sizes`` (the product of the ranges of the indices a subterm
    depends on, its largest over the subterms). Deterministic: it decides which size
    assignments are affordable, so it must not depend on the machine's speed."""
    return cost_model(terms).peak


def work_cost(terms):
    """``cost(sizes)``: the entries the vectorized evaluator computes for ``terms`` at
    ``sizes``, summed over the subterms (a deterministic proxy for its time: about 35
    million entries a second here)."""
    return cost_model(terms).work


class cost_model:
    """``peak`` and ``work`` of evaluating ``terms`` (see ``peak_cost``, ``work_cost``)."""

    def __init__(self, terms):
        seen, groups = set(), {}
        stack = list(terms)
        while stack:
            t = stack.pop()
            if id(t) in seen or not isinstance(t, T.Term):
                continue
            seen.add(id(t))
            key = frozenset(t.free_idx)
            groups[key] = groups.get(key, 0) + 1
            for a in t._args:
                if isinstance(a, T.Term):
                    stack.append(a)
                elif isinstance(a, tuple):
                    stack.extend(b for b in a if isinstance(b, T.Term))
        self.groups = groups
        self.shapes = [tuple(t.shape) for t in terms]

    def peak(self, sizes: dict) -> int:
        best = 1
        for shape in self.shapes:
            best = max(best, _product(shape, sizes))
        for g in self.groups:
            best = max(best, _product([v.size for v in g], sizes))
        return best

    def work(self, sizes: dict) -> int:
        return sum(k * _product([v.size for v in g], sizes) for g, k in self.groups.items()) + \
            sum(_product(shape, sizes) for shape in self.shapes)


def _product(polys, sizes) -> int:
    out = 1
    for p in polys:
        try:
            out *= max(1, int(ival(p, sizes)))
        except EvalError:      # a range that depends on another index: at most its bound
            pass
    return out


def evaluate(t: T.Term, sizes: dict, values: dict, functions: dict | None = None,
             batch: int | None = None) -> np.ndarray:
    """The value of ``t`` as an array of its concrete shape.

    ``sizes`` maps SizeSym -> int, ``values`` maps Var -> array, ``functions`` maps
    ScalarFn / TensorFn -> a Python callable on arrays (a TensorFn's also receives the
    keyword ``out_shape``). With ``batch=B`` each value has a leading axis of B draws and
    so has the result."""
    return evaluate_many([t], sizes, values, functions, batch)[0]


def evaluate_many(terms, sizes: dict, values: dict, functions: dict | None = None,
                  batch: int | None = None) -> list:
    """``[evaluate(t, ...) for t in terms]``, sharing the work on common subterms."""
    from .vectorized import Vectorized, supports
    fast = Vectorized(sizes, values, batch)
    out = []
    with _one_blas_thread():
        for t in terms:
            if supports(t):
                out.append(fast.tensor(t))
            elif batch is None:
                out.append(_Eval(sizes, values, functions or {}).tensor(t, {}))
            else:   # entry by entry, draw by draw
                ev = [_Eval(sizes, {v: a[b] for v, a in values.items()}, functions or {}).tensor(t, {})
                      for b in range(batch)]
                out.append(np.stack([np.asarray(e, dtype=np.float64) for e in ev]))
    return out


_blas = None


def _one_blas_thread():
    """BLAS limited to one thread while terms are evaluated: their products are small,
    and OpenBLAS's threads, waiting for each other on a busy machine, made each one some
    hundred times slower (a ViT block's translation validation spent seconds there)."""
    global _blas
    if _blas is None:
        try:
            from threadpoolctl import ThreadpoolController     # scikit-learn's dependency
            _blas = ThreadpoolController()
        except ImportError:
            _blas = False
    return _blas.limit(limits=1, user_api="blas") if _blas else contextlib.nullcontext()


class _Eval:
    def __init__(self, sizes, values, functions):
        self.sizes, self.values, self.functions = dict(sizes), values, functions
        for s in sizes:
            if not isinstance(s, SizeSym):
                raise EvalError(f"{s!r} is not a size symbol")
        self.cache: dict = {}

    def ival(self, p: Poly, ienv) -> int:
        return int(ival(p, {**self.sizes, **ienv}))

    def tensor(self, t: T.Term, ienv) -> np.ndarray:
        shape = concrete_shape(t.shape, self.sizes)
        key = (t, tuple(sorted(((v.skey, x) for v, x in ienv.items() if v in t.free_idx))))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        out = self._tensor(t, ienv, shape)
        out = np.broadcast_to(np.asarray(out, dtype=np.float64), shape)
        self.cache[key] = out
        return out

    def _tensor(self, t, ienv, shape):
        ev = self.tensor
        if isinstance(t, T.Var):
            try:
                v = self.values[t]
            except KeyError:
                raise EvalError(f"no value for variable {t.name}") from None
            if v.shape != shape:
                raise EvalError(f"value of {t.name} has shape {v.shape}, expected {shape}")
            return v
        if isinstance(t, T.Num):
            return float(t.value)
        if isinstance(t, T.Const):
            return math.pi
        if isinstance(t, T.IntVal):
            return float(self.ival(t.poly, ienv))
        if isinstance(t, T.Named):
            return ev(t.body, ienv)
        if isinstance(t, T.Index):
            base = ev(t.base, ienv)
            idx = [self.ival(e, ienv) for e in t.idx]
            for i, n in zip(idx, base.shape):
                if not 0 <= i < n:
                    if t.total:
                        return np.zeros(shape)
                    raise EvalError(f"index {i} off the axis of size {n} in {t!r}")
            return base[tuple(idx)]
        if isinstance(t, T.Lamda):
            ranges = [range(self.ival(v.size, ienv)) for v in t.idxs]
            out = np.zeros(shape)
            for combo in np.ndindex(*[len(r) for r in ranges]):
                env2 = {**ienv, **dict(zip(t.idxs, combo))}
                out[combo] = ev(t.body, env2)
            return out
        if isinstance(t, T.Add):
            return sum(ev(a, ienv) for a in t.terms)
        if isinstance(t, T.Mul):
            out, zero = 1.0, False
            for a in t.terms:
                f = ev(a, ienv)
                out = out * f
                zero = zero | (np.asarray(f) == 0)
            # an exact zero factor makes the product 0 even where another factor overflowed
            # float64 (exp of a huge finite argument): the terms are about exact reals
            return np.where(zero, 0.0, out) if np.any(zero) else out
        if isinstance(t, T.Pow):
            return power(ev(t.base, ienv), t.exponent)
        if isinstance(t, T.Func):
            args = [ev(a, ienv) for a in t.operands]
            if isinstance(t.fn, str) and t.fn in FUNCTIONS:
                return function(t.fn, args[0])
            f = self._fn(t.fn)
            return f(*args)
        if isinstance(t, T.Sum):
            n = self.ival(t.idx.size, ienv)
            return sum((ev(t.body, {**ienv, t.idx: v}) for v in range(n)), np.zeros(shape))
        if isinstance(t, T.ReduceMax):
            n = self.ival(t.idx.size, ienv)
            vals = [float(ev(t.body, {**ienv, t.idx: v})) for v in range(n)]
            return max(vals) if t.kind == "max" else min(vals)
        if isinstance(t, T.Delta):
            return float(self.ival(t.a, ienv) == self.ival(t.b, ienv))
        if isinstance(t, T.IntCond):
            a, b = self.ival(t.a, ienv), self.ival(t.b, ienv)
            return float({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[t.rel])
        if isinstance(t, T.RealCond):
            x = ev(t.t, ienv)
            return {"<": x < 0, "<=": x <= 0, ">": x > 0, ">=": x >= 0}[t.rel].astype(np.float64)
        if isinstance(t, Argsort):       # stable: ties by index, as the kernel reads it
            return np.argsort(np.asarray(ev(t.s, ienv), dtype=np.float64), kind="stable").astype(np.float64)
        if isinstance(t, IntEq):
            return float(float(ev(t.t, ienv)) == self.ival(t.p, ienv))
        if isinstance(t, IntDiv):
            return float(math.floor(float(ev(t.t, ienv)) / self.ival(t.k, ienv)))
        if isinstance(t, T.Apply):
            return self._apply(t.fn, [ev(a, ienv) for a in t.operands])
        if isinstance(t, T.Vjp):
            f = lambda *a: self._apply(t.fn, a)  # noqa: E731
            args = [np.array(ev(a, ienv)) for a in t.operands]
            cot = np.asarray(ev(t.cot, ienv))
            arg = args[t.argno]
            out = np.zeros(arg.shape)
            for pos in np.ndindex(*arg.shape):
                out[pos] = float(np.sum(cot * _central(lambda h: f(*_bump(args, t.argno, pos, h)))))
            return out
        if isinstance(t, T.At):
            point = {p: np.broadcast_to(np.asarray(ev(v, ienv), dtype=np.float64), concrete_shape(p.shape, self.sizes))
                     for p, v in zip(t.params, t.values)}
            return _Eval(self.sizes, {**self.values, **point}, self.functions).tensor(t.body, ienv)
        if isinstance(t, T.Deriv):
            pos = tuple(self.ival(e, ienv) for e in t.idx)
            base = np.array(self.values[t.var], dtype=np.float64)

            def at(h):
                moved = base.copy()
                moved[pos] += h
                sub = _Eval(self.sizes, {**self.values, t.var: moved}, self.functions)
                return sub.tensor(t.body, ienv)

            x0 = abs(float(base[pos])) if base.size else 0.0
            # a coordinate far below the usual step (sqrt near 0): steps at its own scale
            return _central(at, 1e-5 if x0 == 0 or x0 >= 1e-2 else max(1e-3 * x0, 1e-12))
        raise EvalError(f"cannot evaluate {type(t).__name__}")

    def _apply(self, fn, args):
        """An opaque tensor function's interpretation, called with its concrete output
        shape as the keyword ``out_shape``."""
        return self._fn(fn)(*args, out_shape=concrete_shape(fn.out_shape, self.sizes))

    def _fn(self, fn):
        try:
            return self.functions[fn]
        except KeyError:
            raise EvalError(f"no interpretation for the function {fn.name}") from None


def _bump(args, k, pos, h):
    out = list(args)
    moved = np.array(args[k], dtype=np.float64)
    moved[pos] += h
    out[k] = moved
    return out


def _central(f, h=1e-5):
    """Fourth-order central difference: error O(h^4) for smooth f. Entries whose
    rounding error (about |f| * 1e-16 / h) could exceed 1e-7 of the result are NaN:
    unreliable, so callers skip them rather than act on noise."""
    vals = [np.asarray(f(t), dtype=np.float64) for t in (2 * h, h, -h, -2 * h)]
    out = (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * h)
    noise = max(np.abs(v) for v in vals) * 1e-16 / h * 20
    return np.where(noise > 1e-7 * np.maximum(1.0, np.abs(out)), np.nan, out)


__all__ = ["evaluate", "evaluate_many", "random_values", "concrete_shape", "max_difference", "EvalError"]
_ = IndexVar


def max_difference(lhs: T.Term, rhs: T.Term, sizes: dict, seed: int = 0, fixed: dict | None = None) -> float:
    """Largest absolute difference of two terms at concrete sizes and random inputs
    (derivatives by finite differences: independent of the kernel's normal form)."""
    rng = np.random.default_rng(seed)
    vals = random_values(set(lhs.atoms) | set(rhs.atoms), sizes, rng)
    vals.update(fixed or {})
    a = np.asarray(evaluate(lhs, sizes, vals))
    b = np.asarray(evaluate(rhs, sizes, vals))
    return float(np.max(np.abs(a - b), initial=0.0))
