"""Concrete sizes and inputs for imported claims (untrusted): sampled like an adversary,
but only at points of the real domain.

The kernel's variables are real, but an imported argument may be an integer tensor
(labels, indices, lengths) or a boolean one (a mask), and a label may be modelled by a
one-hot variable (``verigrad.frontends.jaxpr.Importer.onehot``). Every numeric check
(translation validation, the counterexample search, the confirmation of a counterexample
by JAX) draws its sizes and inputs here:

* sizes (``size_plan``): at least eight assignments, each size symbol varied on its own
  through 1, 2, 3, 5, 7 (and 4, 6 where one symbol alone needs them), plus one assignment
  in 11..13 where it fits an element budget;
* inputs (``DRAWS``): N(0, 1), a wide N(0, 10), all positive, all negative, values just
  above and below every constant the code compares against (``jaxpr_thresholds``: the
  ``-4`` of ``x + 4 > 0``, the edges of ``clip``, the zero of ``log(x + 4)``), and a mix;
* integer arguments take integer values: negative, zero, small, large and beyond the
  sizes where the model of the argument allows it; inside the range the importer assumes
  (a one-hot label in ``[0, k)``, stated as an assumption of the certificate) with both
  edges of that range drawn; one-hot variables agree with their labels, a mask is
  ``[m > 0]`` of its real variable.

Everything is seeded from the sizes and the distribution's name, never from ``hash()``:
the same claim draws the same inputs in every process.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from verigrad.kernel import Var
from .evaluate import concrete_shape, ival

INT_HIGH = 4  # the N(0, 1) draw of an integer argument without an assumed range: [0, 4)

# Input distributions, in the order they are tried (names appear in certificates).
DRAWS = ("N(0,1)", "N(0,10)", "positive", "negative", "straddle", "mixed")
DRAW_TEXT = {"N(0,1)": "N(0,1)", "N(0,10)": "N(0,10)", "positive": "all positive", "negative": "all negative",
             "straddle": "straddling the compared constants", "mixed": "a mix"}

CORE_SIZES = (1, 2, 3, 5, 7)          # every size symbol takes each of these
EXTRA_SIZES = (4, 6, 8, 9, 10)        # used when one symbol alone gives too few assignments
LARGE_SIZES = (11, 12, 13)
MIN_ASSIGNMENTS = 8
LARGE_BUDGET = 20000                  # elements of the arguments at the large assignment


# -- sizes ---------------------------------------------------------------------------------

def size_plan(symbols, cost=None, minimum: int = MIN_ASSIGNMENTS, large: bool = True,
              budget: int = LARGE_BUDGET) -> list:
    """Concrete size assignments ``{SizeSym: int}``: all symbols at their smallest value,
    then each symbol through 1, 2, 3, 5, 7 (above its lower bound) with the others varied
    independently, at least ``minimum`` in all, and one assignment in 11..13 if
    ``cost(assignment)`` (elements) fits ``budget``. Deterministic."""
    syms = sorted(set(symbols), key=lambda s: s.name)
    if not syms:
        return [{}]
    core, extra = {}, {}
    for s in syms:
        vals = [v for v in CORE_SIZES if v >= s.lower]
        k = s.lower
        while len(vals) < len(CORE_SIZES):
            if k not in vals and k not in CORE_SIZES:
                vals.append(k)
            k += 1
        core[s] = sorted(vals)
        extra[s] = [v for v in EXTRA_SIZES if v >= s.lower and v not in vals] + \
            [v for v in range(max(s.lower, 14), max(s.lower, 14) + 8)]
    plan: list = []

    def add(a: dict):
        if a not in plan:
            plan.append(a)

    add({s: core[s][0] for s in syms})
    c = len(CORE_SIZES)
    shift = 1
    while len(plan) < minimum - (1 if large else 0) and shift <= c:
        for j in range(c):
            add({s: core[s][(j + i * shift) % c] for i, s in enumerate(syms)})
            if shift > 1 and len(plan) >= minimum - (1 if large else 0):
                break
        shift += 1
    for i in range(len(extra[syms[0]])):          # one symbol (or all at one value): extra values
        if len(plan) >= minimum - (1 if large else 0):
            break
        add({s: extra[s][min(i, len(extra[s]) - 1)] for s in syms})
    if large:
        tries = [{s: max(LARGE_SIZES[i % 3], s.lower) for i, s in enumerate(syms)}]
        tries += [{t: (max(LARGE_SIZES[i % 3], t.lower) if t is s else core[t][1]) for t in syms}
                  for i, s in enumerate(syms)] if len(syms) > 1 else []
        for a in tries:
            if cost is None or cost(a) <= budget:
                add(a)
                break
    for i in range(len(extra[syms[0]])):            # short of the minimum: the next medium ones
        if len(plan) >= minimum:
            break
        add({s: extra[s][min(i, len(extra[s]) - 1)] for s in syms})
    return plan


def describe_sizes(plan: list) -> str:
    """``n in {1, 2, 3, 5, 7, 12}, d in {...}``."""
    syms = sorted({s for a in plan for s in a}, key=lambda s: s.name)
    return ", ".join(f"{s.name} in {{{', '.join(str(v) for v in sorted({a[s] for a in plan}))}}}" for s in syms)


def seed_for(kind: str, sizes: dict, salt: int = 0) -> list:
    """A seed sequence from the distribution's name and the sizes (stable across processes)."""
    return [20240611, zlib.crc32(kind.encode()), salt] + [int(v) for _, v in sorted(
        ((s.name, v) for s, v in sizes.items()))]


# -- real values -------------------------------------------------------------------------

def real_values(shape: tuple, kind: str, rng: np.random.Generator, thresholds=()) -> np.ndarray:
    """Float64 values of one real variable under the distribution ``kind``."""
    if kind == "N(0,1)":
        return rng.standard_normal(shape)
    if kind == "N(0,10)":
        return 10.0 * rng.standard_normal(shape)
    if kind == "positive":
        return np.exp(rng.uniform(np.log(0.02), np.log(5.0), shape))
    if kind == "negative":
        return -np.exp(rng.uniform(np.log(0.02), np.log(5.0), shape))
    ts = np.asarray(sorted(set(float(t) for t in thresholds) | {0.0}), dtype=np.float64)
    near = ts[rng.integers(0, len(ts), shape)] if shape else ts[rng.integers(0, len(ts))]
    gap = np.exp(rng.uniform(np.log(1e-3), np.log(0.3), shape)) * np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    straddle = near + gap * np.maximum(1.0, np.abs(near)) ** 0.5
    # a small constant (1/(4 m^2) = 2.5e-7) is straddled at its own scale too: the values
    # just above and below it keep their sign, where a function may be defined only for one
    small = (np.abs(near) < 1e-2) & (near != 0)
    relative = near * (1.0 + np.exp(rng.uniform(np.log(1e-2), np.log(0.9), shape))
                       * np.where(rng.random(shape) < 0.5, -1.0, 1.0))
    straddle = np.where(small, relative, straddle)
    if kind == "straddle":
        return np.asarray(straddle, dtype=np.float64)
    if kind == "mixed":
        return np.where(rng.random(shape) < 0.5, straddle, 3.0 * rng.standard_normal(shape))
    raise ValueError(f"unknown input distribution {kind!r}")


def apply_facts(x: np.ndarray, facts) -> np.ndarray:
    """Make values respect a variable's facts (``positive``, ``nonneg``, ``nonzero``,
    ``integer``)."""
    if "integer" in facts:
        x = np.round(x)
    if "positive" in facts:
        x = np.abs(x) + (1.0 if "integer" in facts else 0.1)
    elif "nonneg" in facts:
        x = np.abs(x)
    elif "nonzero" in facts:
        x = np.where(np.abs(x) < (1.0 if "integer" in facts else 0.1), 1.0 if "integer" in facts else 0.5, x)
    return np.asarray(x, dtype=np.float64)


def generic_values(variables, sizes: dict, kind: str, rng: np.random.Generator, thresholds=()) -> dict:
    """Values of ``variables`` (Vars, in name order) under ``kind``, respecting their facts."""
    out = {}
    for v in sorted((v for v in variables if isinstance(v, Var)), key=lambda v: (v.name, v.skey)):
        shp = concrete_shape(v.shape, sizes)
        if "integer" in v.facts:
            x = integer_values(shp, kind, rng, sizes, None, thresholds).astype(np.float64)
        else:
            x = real_values(shp, kind, rng, thresholds)
        out[v] = apply_facts(x, v.facts)
    return out


# -- integer values ----------------------------------------------------------------------

def integer_values(shape: tuple, kind: str, rng: np.random.Generator, sizes: dict, high: int | None,
                   thresholds=()) -> np.ndarray:
    """Integer values under ``kind``. With ``high`` (the model assumes ``[0, high)``) every
    value stays in that range, both edges drawn; without, negative, zero, small, large and
    beyond-the-sizes values."""
    if high is not None:
        high = max(1, high)
        if kind == "N(0,1)":
            return rng.integers(0, high, shape)
        if kind in ("negative",):
            return np.zeros(shape, dtype=np.int64)                      # the low edge
        if kind in ("positive",):
            return np.full(shape, high - 1, dtype=np.int64)             # the high edge
        edges = np.asarray([0, high - 1])
        pick = edges[rng.integers(0, 2, shape)]
        return np.where(rng.random(shape) < 0.5, pick, rng.integers(0, high, shape))
    size_vals = sorted({int(v) for v in sizes.values()}) or [1]
    top = max(size_vals)
    if kind == "N(0,1)":
        return rng.integers(0, INT_HIGH, shape)
    if kind == "N(0,10)":
        return rng.integers(-20, 21, shape)
    if kind == "positive":
        return rng.integers(1, 2 * top + 3, shape)                      # up to beyond every size
    if kind == "negative":
        return rng.integers(-8, 0, shape)
    marks = {0, -1, 1}
    for v in size_vals:
        marks |= {v - 1, v, v + 1}
    for t in thresholds:
        # every constant an int32 can straddle (red team RT-12 hid behind a cap at 10**6)
        if np.isfinite(t) and abs(t) < 2 ** 31 - 3:
            c = int(np.floor(t))
            marks |= {c - 1, c, c + 1, c + 2}
    marks = np.asarray(sorted(marks))
    near = marks[rng.integers(0, len(marks), shape)]
    if kind == "straddle":
        return near
    big = rng.integers(100, 5000, shape) * np.where(rng.random(shape) < 0.5, -1, 1)
    return np.where(rng.random(shape) < 0.7, near, big)                # "mixed": with large values


# -- the domain ------------------------------------------------------------------------

@dataclass
class Domain:
    """The imported arguments (``Var`` -> kind and dtype), the importer's models, and the
    constants the code compares against (per argument, and overall)."""
    kinds: dict = field(default_factory=dict)        # Var -> 'real' | 'int' | 'bool'
    dtypes: dict = field(default_factory=dict)       # Var -> numpy dtype name for JAX
    int_ranges: dict = field(default_factory=dict)   # Var -> [Poly k, ...]: values in [0, min k)
    onehot_vars: dict = field(default_factory=dict)  # (Var, Poly k) -> Var M
    inrange_vars: dict = field(default_factory=dict)  # (Var, Poly k) -> Var r (1 where the label is in range)
    thresholds: dict = field(default_factory=dict)   # Var -> (float, ...): where its comparisons flip
    constants: tuple = ()                            # every compared constant, for any variable
    derived: dict = field(default_factory=dict)      # Var -> term: an argument reparametrized (``assume``)
    model_vars: list = field(default_factory=list)   # the fresh variables of those terms
    any_axes: dict = field(default_factory=dict)     # boolean Var -> [axis]: a true entry along each

    @staticmethod
    def of(importer, kinds: dict, dtypes: dict) -> "Domain":
        # the importer's tables themselves: models are made lazily, as terms are built
        from verigrad.frontends.jaxpr import traced_jaxprs
        per_arg, constants = jaxpr_thresholds(traced_jaxprs())
        order = list(kinds)
        thresholds = {order[i]: tuple(sorted(ts)) for i, ts in per_arg.items() if i < len(order)}
        return Domain(dict(kinds), dict(dtypes), importer.int_ranges, importer.onehot_vars,
                      importer.inrange_vars, thresholds, tuple(sorted(constants)))

    def all_thresholds(self, var) -> tuple:
        return tuple(sorted(set(self.thresholds.get(var, ())) | set(self.constants)))

    def int_high(self, var, sizes: dict):
        highs = [ival(k, sizes) for k in self.int_ranges.get(var, ())]
        return max(1, min(highs)) if highs else None

    def draw(self, variables, sizes: dict, kind: str, rng: np.random.Generator) -> dict:
        """Values for ``variables`` (and every one-hot model) under the distribution ``kind``."""
        variables = set(variables) | set(self.onehot_vars.values()) | {var for var, _ in self.onehot_vars} \
            | set(self.inrange_vars.values()) | set(self.model_vars)
        out = {}
        for v in sorted((v for v in variables if isinstance(v, Var)), key=lambda v: (v.name, v.skey)):
            shp = concrete_shape(v.shape, sizes)
            if self.kinds.get(v) == "int" or ("integer" in v.facts and v not in self.onehot_vars.values()):
                out[v] = integer_values(shp, kind, rng, sizes, self.int_high(v, sizes),
                                        self.all_thresholds(v)).astype(np.float64)
            else:
                out[v] = apply_facts(real_values(shp, kind, rng, self.all_thresholds(v)), v.facts)
        self._derive(out, sizes, rng)
        return self._onehots(out, sizes)

    def _derive(self, values: dict, sizes: dict, rng):
        """Reparametrized arguments from their fresh variables; masks with a true entry
        along each assumed axis (``assume``)."""
        if self.derived:
            from .evaluate import evaluate
            for var, term in self.derived.items():
                values[var] = np.asarray(evaluate(term, sizes, values), dtype=np.float64)
        for var, axes in self.any_axes.items():
            if var not in values:
                continue
            m = np.array(values[var], dtype=np.float64)
            for ax in axes:
                moved = np.moveaxis(m, ax, -1)
                if moved.shape[-1] == 0:
                    continue
                dead = ~np.any(moved > 0, axis=-1)
                if np.any(dead):
                    pick = rng.integers(0, moved.shape[-1], dead.shape)
                    rows = np.nonzero(dead)
                    moved[rows + (pick[rows],)] = np.abs(moved[rows + (pick[rows],)]) + 0.5
                m = np.moveaxis(moved, -1, ax)
            values[var] = m

    def fix(self, values: dict, sizes: dict, rng: np.random.Generator, kind: str = "N(0,1)") -> dict:
        """Make ``values`` (Var -> float64 array) respect the argument kinds, in place."""
        for var, k in sorted(self.kinds.items(), key=lambda kv: kv[0].name):
            if k == "int":
                shape = concrete_shape(var.shape, sizes)
                values[var] = integer_values(shape, kind, rng, sizes, self.int_high(var, sizes),
                                             self.all_thresholds(var)).astype(np.float64)
        self._derive(values, sizes, rng)
        return self._onehots(values, sizes)

    def _onehots(self, values: dict, sizes: dict) -> dict:
        for (var, k), M in self.onehot_vars.items():
            labels = values[var]
            kk = ival(k, sizes)
            m = np.zeros(labels.shape + (kk,))
            for q in range(kk - 1):  # the last column is not used by the model
                m[..., q] = labels == q
            values[M] = m
            r = self.inrange_vars.get((var, k))
            if r is not None:
                values[r] = ((labels >= 0) & (labels < kk)).astype(np.float64)
        return values

    def sample(self, variables, sizes: dict, rng: np.random.Generator, kind: str = "N(0,1)") -> dict:
        return self.draw(variables, sizes, kind, rng)

    def jax_value(self, var: Var, value: np.ndarray):
        """The array JAX receives for ``var``'s value."""
        kind = self.kinds.get(var, "real")
        if kind == "bool":
            return np.asarray(value > 0)
        if kind == "int":
            return np.asarray(value).astype(self.dtypes.get(var, "int32"))
        return np.asarray(value, dtype=np.float64)


# -- constants the code compares against -----------------------------------------------
#
# An abstract interpretation of the jaxpr: each value is, where it can be told, affine in
# one input, ``a * input[k] + b`` (entrywise, through broadcasts, reshapes, slices and
# gathers), or a constant. A comparison, max, min or clamp of such a value with a
# constant flips where ``a * x + b = c``; ``log``, ``sqrt``, division and the like change
# behaviour where their operand is 0. Those points are the thresholds of input k.

_COMPARE = {"lt", "le", "gt", "ge", "eq", "ne", "max", "min"}
_ZERO_AT = {"log": 0.0, "log1p": -1.0, "sqrt": 0.0, "rsqrt": 0.0, "cbrt": 0.0, "abs": 0.0, "sign": 0.0,
            "is_finite": 0.0, "atan2": 0.0, "pow": 0.0, "integer_pow": 0.0, "erf_inv": 1.0, "acos": 1.0,
            "asin": 1.0, "atanh": 1.0, "acosh": 1.0, "lgamma": 0.0, "digamma": 0.0}
_SAME = {"convert_element_type", "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "copy",
         "copy_p", "slice", "dynamic_slice", "gather", "rev", "reduce_precision", "optimization_barrier"}


def jaxpr_thresholds(jaxprs, limit: int = 32):
    """``({input position: {threshold}}, {constant})`` of the closed jaxprs (the primal and
    the combined fwd/bwd jaxpr share their leading inputs: the arguments)."""
    per: dict = {}
    consts: set = set()
    for closed in jaxprs:
        jaxpr = getattr(closed, "jaxpr", closed)
        env = {v: (k, 1.0, 0.0) for k, v in enumerate(jaxpr.invars)}
        for v, c in zip(jaxpr.constvars, getattr(closed, "consts", ())):
            env[v] = _const_form(c)
        _walk(jaxpr, env, per, consts)
    clean = lambda xs: {float(x) for x in xs if np.isfinite(x) and abs(x) < 1e8}  # noqa: E731
    per = {k: set(sorted(clean(v))[:limit]) for k, v in per.items()}
    return {k: v for k, v in per.items() if v}, set(sorted(clean(consts))[:limit])


def _const_form(c):
    try:
        arr = np.asarray(c)
        if arr.size and arr.dtype.kind in "biuf" and np.all(arr == arr.flat[0]):
            return (None, 0.0, float(arr.flat[0]))
    except Exception:  # noqa: BLE001 - a constant we cannot read is simply unknown
        pass
    return None


def _walk(jaxpr, env: dict, per: dict, consts: set):
    from jax.extend.core import Literal

    def form(v):
        if isinstance(v, Literal):
            return _const_form(v.val)
        return env.get(v)

    def note(f, value):
        """``f`` (a form) crosses ``value`` somewhere: record the input's threshold."""
        consts.add(value)
        if f is not None and f[0] is not None and f[1] != 0:
            per.setdefault(f[0], set()).add((value - f[2]) / f[1])

    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        ins = [form(v) for v in eqn.invars]
        out = None
        if name in _COMPARE and len(ins) == 2:
            a, b = ins
            if b is not None and b[0] is None:
                note(a, b[2])
            if a is not None and a[0] is None:
                note(b, a[2])
            if a is not None and b is not None and a[0] is not None and a[0] == b[0] and a[1] != b[1]:
                per.setdefault(a[0], set()).add((b[2] - a[2]) / (a[1] - b[1]))
            if name in ("max", "min"):
                # max(c, a x + b) is a x + b on one side of its threshold: later comparisons of
                # it flip where that form says (clip is a max then a min)
                if a is not None and b is not None and b[0] is None:
                    out = a
                elif a is not None and b is not None and a[0] is None:
                    out = b
        elif name == "clamp" and len(ins) == 3:
            lo, x, hi = ins
            for edge in (lo, hi):
                if edge is not None and edge[0] is None:
                    note(x, edge[2])
            out = x
        elif name in _ZERO_AT and ins:
            note(ins[0], _ZERO_AT[name])
            if name in ("acos", "asin", "atanh", "erf_inv"):
                note(ins[0], -1.0)
        elif name == "div" and len(ins) == 2:
            note(ins[1], 0.0)
            a, b = ins
            if a is not None and b is not None and b[0] is None and b[2] != 0:
                out = (a[0], a[1] / b[2], a[2] / b[2])
        elif name in ("add", "sub") and len(ins) == 2:
            a, b = ins
            sgn = 1.0 if name == "add" else -1.0
            if a is not None and b is not None:
                if b[0] is None:
                    out = (a[0], a[1], a[2] + sgn * b[2])
                elif a[0] is None:
                    out = (b[0], sgn * b[1], a[2] + sgn * b[2])
                elif a[0] == b[0]:
                    out = (a[0], a[1] + sgn * b[1], a[2] + sgn * b[2])
        elif name == "mul" and len(ins) == 2:
            a, b = ins
            if a is not None and b is not None:
                if b[0] is None:
                    out = (a[0], a[1] * b[2], a[2] * b[2])
                elif a[0] is None:
                    out = (b[0], b[1] * a[2], b[2] * a[2])
        elif name == "neg" and ins and ins[0] is not None:
            out = (ins[0][0], -ins[0][1], -ins[0][2])
        elif name in _SAME and ins:
            out = ins[0]
        if out is not None and out[0] is not None and out[1] == 0:
            out = (None, 0.0, out[2])
        # sub-jaxprs: calls map their inputs one to one; anything else is walked blind
        for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
            sub = eqn.params.get(key)
            if sub is None or callable(sub) and not hasattr(sub, "eqns") and not hasattr(sub, "jaxpr"):
                continue
            inner = getattr(sub, "jaxpr", sub)
            if not hasattr(inner, "eqns"):
                continue
            sub_env = {}
            for v, c in zip(inner.constvars, getattr(sub, "consts", ())):
                sub_env[v] = _const_form(c)
            if len(inner.invars) == len(ins):
                sub_env.update({v: f for v, f in zip(inner.invars, ins) if f is not None})
            _walk(inner, sub_env, per, consts)
            if len(inner.outvars) == len(eqn.outvars):
                for o, iv in zip(eqn.outvars, inner.outvars):
                    f = _const_form(iv.val) if isinstance(iv, Literal) else sub_env.get(iv)
                    if f is not None:
                        env[o] = f
            break
        for key in ("branches",):
            for br in eqn.params.get(key, ()) or ():
                inner = getattr(br, "jaxpr", br)
                if hasattr(inner, "eqns"):
                    _walk(inner, {}, per, consts)
        for key in ("cond_jaxpr", "body_jaxpr"):
            sub = eqn.params.get(key)
            inner = getattr(sub, "jaxpr", sub)
            if inner is not None and hasattr(inner, "eqns"):
                _walk(inner, {}, per, consts)
        if out is not None and len(eqn.outvars) == 1:
            env[eqn.outvars[0]] = out
