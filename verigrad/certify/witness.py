"""Witness check: every theorem the kernel makes, checked numerically (untrusted).

The kernel tells the callables in ``verigrad.kernel.theorem.observers`` of every theorem
it makes. ``Witness`` is such an observer: it evaluates both sides of the statement in
float64 (the numeric meaning of ``verigrad.certify.evaluate``; derivatives by central
differences, so it shares no code with the kernel's normal form) at a few concrete size
assignments and random values, and raises ``WitnessError`` when they differ. It is the
kernel's tripwire while the tests run (``tests/conftest.py`` installs it;
``VERIGRAD_WITNESS=0`` switches it off) and available to any process with
``VERIGRAD_WITNESS=1`` (``verigrad/__init__.py``).

What is checked, for ``hyps |- lhs = rhs`` under ``conds``:

- sizes: every size symbol of the statement (of its shapes, and of the ranges of its
  free and bound indices) at its lower bound, +1, +2 (1, 2, 3 for a size >= 1), and at
  two assignments in which each symbol independently takes one of those or a random
  value up to 9. Every index range must be >= 0 at every assignment;
- free indices: all their values (both sides are wrapped in a ``Lamda`` over them);
- values: random, with each variable's facts (positive, nonneg, nonzero, integer:
  integer values, negative ones and small ones included); opaque functions
  (``ScalarFn``, ``TensorFn``) get random smooth meanings (a theorem about an opaque
  function holds for every differentiable one);
- hypotheses ``v = t`` (a variable on either side, not occurring in the other): ``v``
  takes the value of ``t``; a statement with another kind of hypothesis is skipped;
- conditions: a draw counts only where every condition holds, for every value of its
  free indices, with a margin (``nonzero``/``offkink``: ``|t| > 1e-3``; ``positive``:
  ``t > 1e-3``: a finite difference must not straddle a kink), and holds still with each
  comparison inside it read ``SLACK`` past 0 either way (a count of a maximum's
  maximizers, ``3/2 - #{b: u(b) >= max u} > 0``, must not hold by a rounding error where
  two entries tie exactly); ``smooth`` is not checked. Draws are redrawn a few times when too few satisfy them.

A draw mismatches where an entry differs by more than ``RTOL * max(1, |lhs|, |rhs|)``
(entries the finite differences mark unreliable, NaN, and non-finite ones are ignored).
A mismatch is confirmed by two points nearby (real values moved by about 1e-3,
relatively; integer data kept): a finite difference across a kink, or rounding at an
indicator's kink, does not persist; a false statement does. Each statement is checked
once per process (keyed by the hash-consed statement itself).

What it costs is bounded, so it can run during the whole test suite: a statement with
more than ``NODE_CAP`` distinct subterms, or whose estimated cost (linear in its
subterms and the entries of their arrays) is over ``BUDGET_S`` even at its smallest
sizes, is skipped ("large"; big network statements); an assignment over what is left of
the budget is dropped; and a check stops after ``DEADLINE_S`` seconds of CPU or at an
array of more than ``ARRAY_CAP`` entries ("slow", or checked at fewer sizes). Statements
with constants beyond float64's range are skipped. Every skip is counted in ``stats``.
"""
from __future__ import annotations

import contextlib
import math
import os
import random
import time
from collections import Counter

import numpy as np

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly, SizeSym

from .vectorized import Vectorized

RTOL = 1e-5          # relative tolerance (of max(1, |a|, |b|)) without derivatives
RTOL_DERIV = 1e-4    # with finite-difference derivatives in the statement
MARGIN = 1e-3        # a condition t != 0 / t > 0 must hold with this margin
SLACK = 1e-7         # ... and with each comparison [u rel 0] in it moved by this much either way
DRAWS = 3            # value draws per size assignment (three times that with integer data)
ROUNDS = 3           # rounds of draws while too few satisfy the hypotheses and conditions
NODE_CAP = 800       # statements with more distinct subterms are skipped ("large")
BUDGET_S = 0.04      # estimated seconds per statement, all its size assignments together
RANDOM_MAX = 9       # random sizes are drawn up to this (or the lower bound)
DEADLINE_S = 0.25    # CPU seconds per statement, whatever the estimate said: then it stops
ARRAY_CAP = 2_000_000  # entries of one intermediate array (draws included): beyond, it stops


class WitnessError(AssertionError):
    """A theorem the kernel made is false at a concrete point: the kernel (or a rule it
    was given) is unsound, or, rarely, the numeric check is wrong. Names the rule, the
    statement, the sizes and the values."""


class Witness:
    """The observer. ``stats`` counts theorems made, statements checked, and those
    skipped by reason; ``failures`` lists the messages of every mismatch found (also
    when ``raise_errors`` is off, or the code under test swallowed the exception)."""

    def __init__(self, budget_s: float = BUDGET_S, node_cap: int = NODE_CAP, raise_errors: bool = True,
                 seed: int = 0, deadline_s: float = DEADLINE_S):
        self.budget_s, self.node_cap, self.raise_errors = budget_s, node_cap, raise_errors
        self.deadline_s = deadline_s
        self.rng = random.Random(seed)
        self.stats: Counter = Counter()
        self.failures: list[str] = []
        self.errors: list[str] = []       # evaluator crashes (skips, not failures), the first few
        self.seconds = 0.0                # wall time spent checking (and cpu_seconds, CPU time)
        self.cpu_seconds = 0.0
        self.slowest: list = []           # (seconds, rule, lhs, rhs) of the ten slowest checks
        self._done: dict = {}
        self._large: dict = {}

    # -- the observer ---------------------------------------------------------------------
    def __call__(self, th) -> None:
        self.stats["theorems"] += 1
        key = (frozenset((th.lhs, th.rhs)), th.conds, th.hyps)
        if key in self._done:
            self.stats["cached"] += 1
            msg = self._done[key]
        else:
            verdict, msg = self.verdict(th)
            self.stats[verdict] += 1
            self._done[key] = msg
            if msg is not None:
                self.failures.append(msg)
        if msg is not None and self.raise_errors:
            raise WitnessError(msg)

    def verdict(self, th) -> tuple[str, str | None]:
        """``check``, with the checker's own limits (an evaluator error) a skip, never a
        failure; timed in ``seconds``."""
        start, cpu = time.perf_counter(), time.process_time()
        try:
            with np.errstate(all="ignore"):
                return self.check(th)
        except Exception as e:
            if len(self.errors) < 20:
                import traceback
                where = traceback.extract_tb(e.__traceback__)[-1]
                self.errors.append(f"{th.rule}: {type(e).__name__}: {e} (at {where.filename.rsplit('/', 1)[-1]}:"
                                   f"{where.lineno}) in {_statement(th)[:300]}")
            return "skipped: error", None
        finally:
            spent = time.perf_counter() - start
            self.seconds += spent
            self.cpu_seconds += time.process_time() - cpu
            if len(self.slowest) < 10 or spent > self.slowest[0][0]:
                self.slowest.append((spent, th.rule, th.lhs, th.rhs))
                self.slowest.sort(key=lambda e: e[0])
                del self.slowest[:-10]

    def _too_large(self, side) -> bool:
        """One side alone is over the node cap, or over the budget at its smallest sizes
        (then so is every statement with this side: remembered, as sides recur)."""
        big = self._large.get(side)
        if big is None:
            n, nodes = _size_and_nodes(side, self.node_cap)
            big = n > self.node_cap
            if not big:
                if nodes is None:           # the size was remembered: the subterms are found again
                    nodes = _dag([side], self.node_cap)
                idx = set().union(*(t.free_idx for t in nodes))
                syms = set().union(*(t.sizes for t in nodes), *(_size_syms(v.size) for v in idx))
                big = _Cost(nodes, DRAWS).seconds({s: s.lower for s in syms}) > self.budget_s
            self._large[side] = big
        return big

    # -- one statement ---------------------------------------------------------------------
    def check(self, th) -> tuple[str, str | None]:
        """``(verdict, failure message or None)``; verdict is "checked", "failed" or
        "skipped: <reason>"."""
        defs = _definitions(th.hyps)
        if defs is None:
            return "skipped: hypotheses", None
        idx = sorted(th.lhs.free_idx | th.rhs.free_idx, key=lambda v: v.skey)
        lhs, rhs = (T.Lamda(idx, th.lhs), T.Lamda(idx, th.rhs)) if idx else (th.lhs, th.rhs)
        conds = []
        for c in th.conds:
            if c.kind != "smooth":
                ci = sorted(c.term.free_idx, key=lambda v: v.skey)
                conds.append((c.kind, T.Lamda(ci, c.term) if ci else c.term))
        terms = [lhs, rhs] + [t for _, t in conds] + [t for _, t in defs]
        if any(self._too_large(t) for t in (th.lhs, th.rhs)):
            return "skipped: large", None
        nodes = _dag(terms, self.node_cap)
        if nodes is None:
            return "skipped: large", None
        if any(_beyond_float(t) for t in nodes):
            return "skipped: constants beyond float64", None
        ranges = set()         # the ranges of every index, free or bound
        for t in nodes:
            ranges |= {v.size for v in t.free_idx}
            for a in t._args:
                ranges |= {b.size for b in (a if isinstance(a, tuple) else (a,)) if isinstance(b, IndexVar)}
        syms = sorted(set().union(*(t.sizes for t in nodes), *(_size_syms(r) for r in ranges)),
                      key=lambda s: s.skey)
        rng = random.Random(self.rng.getrandbits(64))
        point = _Point(th, lhs, rhs, conds, defs, nodes, rng)
        cost = _Cost(nodes, point.draws)
        left, tried = self.budget_s, 0
        plan = list(_assignments(syms, rng))
        plan = (plan * 3)[:max(3, len(plan))]      # few size assignments: more draws at each
        point.deadline, cut = time.process_time() + self.deadline_s, False
        for j, sizes in enumerate(plan):
            est = cost.seconds(sizes)
            if est > left:
                if j == 0:      # the smallest sizes: every other assignment costs more
                    break
                continue
            left -= est
            try:
                msg = _negative_range(th, ranges, sizes) or point.check(sizes, self.stats)
            except _TooSlow:
                cut = True
                break
            tried += 1
            if msg is not None:
                return "failed", msg
        if not tried:
            return ("skipped: slow" if cut else "skipped: large"), None
        if cut:
            self.stats["checked at fewer sizes: deadline"] += 1
        return "checked", None


class _Point:
    """One statement, evaluated at concrete sizes and batches of random draws."""

    def __init__(self, th, lhs, rhs, conds, defs, nodes, rng):
        self.th, self.lhs, self.rhs, self.conds, self.defs, self.rng = th, lhs, rhs, conds, defs, rng
        self.tol = RTOL_DERIV if any(isinstance(t, T.Deriv) or isinstance(t, T.Vjp) for t in nodes) else RTOL
        self.compares = bool(conds) and any(isinstance(t, T.RealCond) for t in nodes)
        free = set()        # the statement's variables (not the params an At binds)
        for t in [lhs, rhs, *(t for _, t in conds), *(t for _, t in defs)]:
            free |= {a for a in t.atoms if isinstance(a, T.Var)}
        self.draw_vars = sorted(free - {v for v, _ in defs}, key=lambda v: v.skey)
        self.varying = bool(free)
        # integer data: more draws, since a statement may fail at one boundary value only
        self.draws = 1 if not free else DRAWS * (3 if any("integer" in v.facts for v in free) else 1)
        self.deadline = math.inf
        self.fns = sorted({a for t in nodes for a in t.atoms if isinstance(a, (T.ScalarFn, T.TensorFn))},
                          key=lambda f: f.skey)

    def check(self, sizes: dict, stats: Counter) -> str | None:
        rng = np.random.default_rng(self.rng.getrandbits(63))
        functions = {fn: (_scalar_fn(fn.arity, self.rng.getrandbits(32)) if isinstance(fn, T.ScalarFn)
                          else _tensor_fn(self.rng.getrandbits(32))) for fn in self.fns}
        good = 0
        for _ in range(ROUNDS):
            values = {v: _random_value(v, sizes, rng, self.draws) for v in self.draw_vars}
            valid, where, full, out = self.evaluate(sizes, values, functions, self.draws)
            for b in np.flatnonzero(valid):
                good += 1
                if where[b] is None:
                    continue
                # confirmed when it persists at two points nearby
                one = {v: x[b] for v, x in values.items()}
                near = {v: np.stack([x, *(_jitter(v, x, rng) for _ in range(2))]) for v, x in one.items()}
                v2, w2, _, _ = self.evaluate(sizes, near, functions, 3)
                if not self.varying or (v2[1:].all() and all(w is not None for w in w2[1:])):
                    return _message(self.th, sizes, where[b], {v: x[b] for v, x in full.items()},
                                    out[0][b], out[1][b])
                stats["mismatches not confirmed"] += 1
            if good >= self.draws or not self.varying:
                break
        if not good:
            stats["sizes skipped: conditions"] += 1
        return None

    def evaluate(self, sizes, values, functions, batch):
        """For a batch of draws: which are inside the hypotheses and conditions, the first
        mismatching entry of each (or None), the values (with defined variables), and the
        two sides."""
        values = dict(values)
        valid = np.ones(batch, dtype=bool)
        for v, t in self.defs:          # hypotheses v = t: v takes t's value
            val = _evaluate([t], sizes, values, functions, batch, self.deadline)[0]
            valid &= _has_facts(v, val)
            values[v] = val
        out = _evaluate([self.lhs, self.rhs] + [t for _, t in self.conds], sizes, values, functions, batch,
                        self.deadline)
        for (kind, _), val in zip(self.conds, out[2:]):
            valid &= _holds(kind, val)
        if self.compares:       # ... and with every comparison inside them read both ways past rounding
            for slack in (SLACK, -SLACK):
                vals = _evaluate([t for _, t in self.conds], sizes, values, functions, batch, self.deadline, slack)
                for (kind, _), val in zip(self.conds, vals):
                    valid &= _holds(kind, val)
        where = [_mismatch(out[0][b], out[1][b], self.tol) if valid[b] else None for b in range(batch)]
        return valid, where, values, out


def _negative_range(th, ranges, sizes) -> str | None:
    """Every index range is >= 0 at every size (the kernel proves it of each range it
    accepts); a negative one would be a sum of -1 terms."""
    from .evaluate import ival
    for r in sorted(ranges, key=lambda r: r.skey):
        if ival(r, sizes) < 0:
            return (f"witness check: the {th.rule} rule made a theorem with an index range of negative length\n"
                    f"  statement: {_statement(th)}\n"
                    f"  sizes: " + ", ".join(f"{s.name}={k}" for s, k in sizes.items()) + "\n"
                    f"  range: [0, {r}) = [0, {ival(r, sizes)})")
    return None


def _beyond_float(t) -> bool:
    """A constant or exponent so large (a finite mask value, -0.7 * float32 max) that
    float64 evaluation overflows where the exact reals do not: such a statement cannot be
    witnessed numerically."""
    if isinstance(t, T.Num):
        return abs(t.value) > 1e12
    if isinstance(t, T.Pow):
        return abs(t.exponent) > 1e6
    return False


def _statement(th) -> str:
    try:
        return th.statement()
    except Exception:
        return f"{th.lhs!r} = {th.rhs!r}"


# -- evaluation: the vectorized evaluator, with derivatives, At and opaque functions ------------

class _Fallback(Exception):
    """A term the batched evaluator does not take: evaluated entry by entry instead."""


class _TooSlow(Exception):
    """The statement's deadline passed."""


def _evaluate(terms, sizes, values, functions, batch, deadline=math.inf, slack=0.0) -> list:
    """Each term's value for a batch of draws (leading axis ``batch``); ``slack`` as in
    ``Vectorized`` (the entry-by-entry fallback reads comparisons exactly)."""
    try:
        ev = _Batched(sizes, values, batch, functions, deadline, slack=slack)
        return [np.asarray(ev.tensor(t), dtype=np.float64) for t in terms]
    except _Fallback:
        from .evaluate import evaluate_many
        return [np.asarray(x, dtype=np.float64) for x in evaluate_many(terms, sizes, values, functions, batch)]


class _Batched(Vectorized):
    """``Vectorized`` (every index an array axis, draws a leading axis) that also takes
    derivatives (central differences in each entry of the variable, all index values at
    once), ``At`` at a closed point, and opaque functions of closed arguments."""

    def __init__(self, sizes, values, batch, functions, deadline=math.inf, clock=None, slack=0.0):
        super().__init__(sizes, values, batch, slack)
        self.functions, self.deadline = functions, deadline
        self.clock = clock if clock is not None else [0]     # calls, shared with sub-evaluators

    def at(self, t, idx, env, ndim):
        self._tick()
        out = super().at(t, idx, env, ndim)
        if np.size(out) > ARRAY_CAP:
            raise _TooSlow
        return out

    def _tick(self):
        self.clock[0] += 1
        if not self.clock[0] % 4 and time.process_time() > self.deadline:
            raise _TooSlow

    def _at(self, t, idx, env, ndim):
        if isinstance(t, T.Deriv):
            return self._deriv(t, env, ndim)
        if isinstance(t, T.At):
            if any(v.free_idx for v in t.values):
                raise _Fallback
            point = {p: self.tensor(v) for p, v in zip(t.params, t.values)}
            return self._sub(point).at(t.body, idx, env, ndim)
        if isinstance(t, T.Func) and not isinstance(t.fn, str):
            args = [np.asarray(self.at(a, idx if a.shape else (), env, ndim), dtype=np.float64) for a in t.operands]
            return self.functions[t.fn](*args)
        if isinstance(t, (T.Apply, T.Vjp)):
            free = sorted(t.free_idx, key=lambda v: v.skey)
            return self._read(self._opaque(t, free), tuple(env[v] for v in free) + tuple(idx), env)
        return super()._at(t, idx, env, ndim)

    def _sub(self, values: dict) -> "_Batched":
        return _Batched(self.sizes, {**self.values, **values}, self.batch, self.functions, self.deadline, self.clock)

    def _deriv(self, t, env, ndim):
        base = np.asarray(self.values[t.var], dtype=np.float64)
        lead = (slice(None),) if self.batch is not None else ()
        pos = [np.asarray(self.ival(e, env)) for e in t.idx]
        out = 0.0
        for p in np.ndindex(*base.shape[len(lead):]):
            mask = np.ones((), dtype=bool)
            for a, pa in zip(pos, p):
                mask = mask & (a == pa)
            if not mask.any():
                continue

            def f(h, p=p):
                moved = base.copy()
                moved[lead + p] += h
                return np.asarray(self._sub({t.var: moved}).at(t.body, (), env, ndim), dtype=np.float64)
            out = out + np.where(mask, _central(f), 0.0)
        return out

    def _opaque(self, t, free):
        """The whole value of an Apply or Vjp, with the batch axis and an axis for each of
        its ``free`` indices (its operands are read as tensors over them)."""
        from .evaluate import concrete_shape
        fn = self.functions[t.fn]
        over = lambda a: self.tensor(T.Lamda(free, a) if free else a)  # noqa: E731
        args = [over(a) for a in t.operands]
        cots = over(t.cot) if isinstance(t, T.Vjp) else None
        out_shape = concrete_shape(t.fn.out_shape, self.sizes)
        lead = [self.batch] if self.batch is not None else []
        grid = lead + [int(self.size(v.size)) for v in free]
        res = np.zeros(tuple(grid) + concrete_shape(t.shape, self.sizes))
        for at in np.ndindex(*grid):
            self._tick()
            a = [x[at] for x in args]
            if isinstance(t, T.Apply):
                res[at] = fn(*a, out_shape=out_shape)
                continue
            cot, arg = cots[at], a[t.argno]
            for pos in np.ndindex(*arg.shape):
                def f(h, pos=pos):
                    moved = list(a)
                    moved[t.argno] = arg.copy()
                    moved[t.argno][pos] += h
                    return np.sum(cot * fn(*moved, out_shape=out_shape))
                res[at + pos] = _central(f)
        return res


def _central(f, h=1e-5):
    """Fourth-order central difference; entries whose rounding error could exceed 1e-7
    of the result are NaN (unreliable: ignored)."""
    vals = [np.asarray(f(s), dtype=np.float64) for s in (2 * h, h, -h, -2 * h)]
    out = (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * h)
    noise = np.maximum.reduce([np.abs(v) for v in vals]) * 1e-16 / h * 20
    return np.where(noise > 1e-7 * np.maximum(1.0, np.abs(out)), np.nan, out)


# -- hypotheses -----------------------------------------------------------------------------

def _definitions(hyps):
    """Hypotheses as definitions ``[(v, t)]`` in an order where each ``t`` mentions only
    variables drawn or defined before it; None if some hypothesis is not of that form."""
    defs = {}
    for l, r in hyps:
        for v, t in ((l, r), (r, l)):
            if isinstance(v, T.Var) and v not in t.atoms and not t.free_idx and v not in defs:
                defs[v] = t
                break
        else:
            return None
    out, placed = [], set()
    while len(out) < len(defs):
        ready = [v for v in defs if v not in placed and not (defs[v].atoms & (defs.keys() - placed))]
        if not ready:
            return None
        for v in sorted(ready, key=lambda v: v.skey):
            out.append((v, defs[v]))
            placed.add(v)
    return out


def _has_facts(v: T.Var, x: np.ndarray) -> np.ndarray:
    """Per draw (leading axis): ``x`` is finite and has ``v``'s facts."""
    x = np.asarray(x, dtype=np.float64)
    axes = tuple(range(1, x.ndim))
    ok = np.isfinite(x)
    f = v.facts
    if "positive" in f:
        ok &= x > 0
    if "nonneg" in f:
        ok &= x >= 0
    if "nonzero" in f:
        ok &= x != 0
    if "integer" in f:
        ok &= x == np.round(x)
    return ok.all(axis=axes) if axes else ok


# -- values and meanings --------------------------------------------------------------------

def _random_value(v: T.Var, sizes: dict, rng: np.random.Generator, batch: int) -> np.ndarray:
    from .evaluate import concrete_shape
    shape = (batch,) + concrete_shape(v.shape, sizes)
    x = rng.standard_normal(shape)
    f = v.facts
    if "integer" in f:            # integer data: integers, negative ones included, small ones often
        x = np.where(rng.random(shape) < 0.5, rng.integers(-2, 4, shape), np.round(x * 3))
        if "positive" in f:
            x = np.abs(x) + 1
        elif "nonneg" in f:
            x = np.abs(x)
        elif "nonzero" in f:
            x = np.where(x == 0, 1.0, x)
    elif "positive" in f or "nonneg" in f:
        x = np.abs(x) + 0.1
    elif "nonzero" in f:
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    return np.asarray(x, dtype=np.float64)


def _jitter(v: T.Var, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``x`` moved a little: each real entry scaled by ``exp(1e-3 z)`` (so its sign and
    facts are kept); integer data unchanged."""
    return x if "integer" in v.facts else x * np.exp(1e-3 * rng.standard_normal(np.shape(x)))


def _scalar_fn(arity: int, seed: int):
    r = np.random.default_rng(seed)
    a = r.uniform(0.5, 1.5, arity) * r.choice([-1.0, 1.0], arity)
    c = r.uniform(0.2, 0.6, arity)
    b = r.uniform(-0.5, 0.5)

    def f(*xs):
        z = b + sum(ai * x for ai, x in zip(a, xs))
        return np.tanh(z) + sum(ci * np.sin(x) for ci, x in zip(c, xs))
    return f


def _tensor_fn(seed: int):
    mats: dict = {}

    def f(*args, out_shape):
        v = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in args]) if args else np.zeros(0)
        k = int(np.prod(out_shape, dtype=np.int64))
        key = (v.size, k)
        if key not in mats:
            r = np.random.default_rng([seed, v.size, k])
            scale = 1 / math.sqrt(max(1, v.size))
            mats[key] = (r.standard_normal((k, v.size)) * scale, r.standard_normal((k, v.size)) * scale,
                         r.uniform(-0.5, 0.5, k))
        w1, w2, b = mats[key]
        return (np.tanh(w1 @ v + b) + 0.3 * (w2 @ v) ** 2).reshape(out_shape)
    return f


# -- conditions and comparison ----------------------------------------------------------------

def _holds(kind: str, val) -> np.ndarray:
    """Per draw: the condition holds at every entry, with the margin."""
    x = np.asarray(val, dtype=np.float64)
    ok = np.isfinite(x) & ((x > MARGIN) if kind == "positive" else (np.abs(x) > MARGIN))
    return ok.all(axis=tuple(range(1, x.ndim))) if x.ndim > 1 else ok


def _mismatch(a, b, tol: float):
    """The first index where ``a`` and ``b`` differ beyond the tolerance, or None."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    fine = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        off = fine & (np.abs(a - b) > tol * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b))))
    if not off.any():
        return None
    return tuple(int(i) for i in np.argwhere(off)[0]) if off.ndim else ()


def _message(th, sizes, where, values, a, b) -> str:
    def show(x):
        x = np.asarray(x)
        return np.array2string(x, precision=6, threshold=12) if x.size else "[]"
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    idx = sorted(th.lhs.free_idx | th.rhs.free_idx, key=lambda v: v.skey)
    at = ", ".join(f"{v.name}={i}" for v, i in zip(idx, where))
    vals = "; ".join(f"{v.name}={show(x)}" for v, x in sorted(values.items(), key=lambda vx: vx[0].name)) or "none"
    return (f"witness check: the {th.rule} rule made a theorem that is false at a concrete point\n"
            f"  statement: {_statement(th)}\n"
            f"  sizes: {', '.join(f'{s.name}={k}' for s, k in sizes.items()) or 'none'}\n"
            f"  entry: [{', '.join(map(str, where))}]" + (f" (free indices {at})" if at else "") + "\n"
            f"  lhs = {float(a[where])!r}, rhs = {float(b[where])!r}\n"
            f"  values: {vals[:2000]}")


# -- sizes and cost -----------------------------------------------------------------------------

def _size_syms(p: Poly) -> set:
    return {s for s in p.symbols() if isinstance(s, SizeSym)}


def _assignments(syms: list, rng: random.Random):
    """Size assignments: every symbol at its lower bound, +1, +2; then two in which each
    takes one of those or a random value up to 9, independently; no repeats."""
    out = [{s: s.lower + k for s in syms} for k in (0, 1, 2)]
    for _ in range(2 if syms else 0):
        out.append({s: s.lower + rng.choice([0, 1, 2, rng.randint(0, max(RANDOM_MAX - s.lower, 0))]) for s in syms})
    seen = set()
    for a in out:
        key = tuple(a.values())
        if key not in seen:
            seen.add(key)
            yield a


_sizes: dict = {}


def _size(t, cap: int) -> int:
    """The number of distinct subterms of ``t`` (``cap + 1`` if more), remembered: the
    sides of a proof's statements recur (terms are immortal, being hash-consed)."""
    return _size_and_nodes(t, cap)[0]


def _size_and_nodes(t, cap: int):
    """``(_size(t, cap), the subterms found)``; the subterms are None where the size was
    remembered (or there are more than ``cap``)."""
    n = _sizes.get(t)
    if n is not None:
        return n, None
    found = _dag([t], cap)
    n = _sizes[t] = cap + 1 if found is None else len(found)
    return n, found


_children: dict = {}     # term -> its argument terms, in order (terms are immortal: hash-consed)


def _kids(t) -> tuple:
    kids = []
    for a in t._args:
        if isinstance(a, T.Term):
            kids.append(a)
        elif isinstance(a, tuple):
            kids.extend(b for b in a if isinstance(b, T.Term))
    kids = _children[t] = tuple(kids)
    return kids


def _dag(terms, cap: int):
    """The distinct subterms of ``terms``, or None if there are more than ``cap``. (Terms
    compare by identity: a set of them is a set of identities.)"""
    seen, out, stack = set(), [], list(terms)
    children, pop, push, add, keep = _children.get, stack.pop, stack.extend, seen.add, out.append
    while stack:
        t = pop()
        if t in seen:
            continue
        add(t)
        keep(t)
        if len(out) > cap:
            return None
        kids = children(t)
        push(kids if kids is not None else _kids(t))
    return out


_dims: dict = {}     # term -> the ranges of its free indices, then its dimensions (read by _Cost)


class _Cost:
    """An estimate of the seconds a batch of draws costs at given sizes: a cost per
    subterm and per array entry it builds (the product of the ranges of its free indices
    and its shape); a derivative re-evaluates its body four times for each entry of its
    variable (the body's cost is bounded by the whole statement's). Linear in the
    subterms: the estimate must cost much less than the check."""

    PER_NODE = 2.5e-5
    PER_ENTRY = 5e-8

    def __init__(self, nodes, draws: int):
        self.draws = draws
        self.polys: dict = {}                  # each range or dimension, once
        polys = self.polys
        ref = lambda p: polys.setdefault(p, len(polys))  # noqa: E731
        items = []
        for t in nodes:
            dims = _dims.get(t)
            if dims is None:
                dims = _dims[t] = tuple([v.size for v in t.free_idx] + list(t.shape))
            row = []
            for p in dims:
                k = polys.get(p)
                if k is None:
                    k = polys[p] = len(polys)
                row.append(k)
            items.append(tuple(row))
        self.items = items
        self.repeats = [tuple(ref(p) for p in t.var.shape) for t in nodes if isinstance(t, T.Deriv)]
        self.opaque = [tuple(ref(p) for a in t.operands for p in a.shape) for t in nodes if isinstance(t, T.Vjp)]

    def seconds(self, sizes: dict) -> float:
        from .evaluate import EvalError, ival
        vals = [1] * len(self.polys)
        for p, k in self.polys.items():
            try:
                vals[k] = max(1, int(ival(p, sizes)))
            except EvalError:   # a range that depends on another index: at most its bound
                pass

        def prod(ks):
            out = 1
            for k in ks:
                out *= vals[k]
            return out

        base = sum(self.PER_NODE + prod(ks) * self.PER_ENTRY * self.draws for ks in self.items)
        repeat = 1 + sum(4 * prod(ks) for ks in self.repeats)
        opaque = sum(4 * prod(ks) * self.PER_NODE * self.draws for ks in self.opaque)
        return (base * repeat + opaque) * (1.5 if self.draws > 1 else 1)


# -- installing -------------------------------------------------------------------------------

_installed: Witness | None = None


def install(**kw) -> Witness:
    """Install a ``Witness`` as a kernel observer (one per process); return it."""
    global _installed
    from verigrad.kernel import theorem as TH
    if _installed is None:
        _installed = Witness(**kw)
    if _installed not in TH.observers:
        TH.observers.append(_installed)
    return _installed


@contextlib.contextmanager
def paused():
    """Within the block the installed witness (if any) sees no theorems: for tests that
    make false theorems on purpose (a kernel function monkeypatched to be wrong) or check
    theorems with a witness of their own."""
    from verigrad.kernel import theorem as TH
    was = _installed is not None and _installed in TH.observers
    if was:
        TH.observers.remove(_installed)
    try:
        yield
    finally:
        if was and _installed not in TH.observers:
            TH.observers.append(_installed)


def uninstall() -> None:
    from verigrad.kernel import theorem as TH
    if _installed in TH.observers:
        TH.observers.remove(_installed)


def installed() -> Witness | None:
    return _installed


def enabled_by_env(default: bool = False) -> bool:
    """``VERIGRAD_WITNESS``: "1" on, "0" off, unset: ``default``."""
    v = os.environ.get("VERIGRAD_WITNESS", "").strip().lower()
    return default if v == "" else v not in ("0", "false", "no", "off")


def summary(w: Witness | None = None) -> str:
    w = w or _installed
    if w is None:
        return "witness check: not installed"
    s = w.stats
    skipped = ", ".join(f"{v} {k[len('skipped: '):]}" for k, v in sorted(s.items()) if k.startswith("skipped: "))
    return (f"witness check: {s['theorems']} theorems made, {s['checked']} statements checked, "
            f"{s['cached']} repeats, {s['failed']} false; skipped {skipped or 'none'}; {w.seconds:.1f} s")
