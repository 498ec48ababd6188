"""Refutation by running JAX alone, for code the importer refuses (untrusted; it can only
produce a REFUTED whose counterexample JAX itself computes).

When a function cannot be imported (a primitive the kernel has no model for yet: sort,
argsort, a gather by data, scatter-add, a loop), nothing can be proved, but a wrong
backward can still be shown wrong: at concrete sizes and the adversarial inputs of
``inputs`` (N(0, 1), N(0, 10), all positive, all negative, a mix), the custom rule's
cotangent (``jax.vjp`` of the ``custom_vjp`` function, which runs the user's backward) is
compared with JAX's derivative of the undecorated forward (``jax.vjp`` of the primal
function, computed in float64 with narrowing casts widened). A difference beyond
``REFUTE_TOL`` (relative to the cotangent's scale; looser where the code narrows to
float32) at an input where the forward is finite is confirmed by central differences
of the primal where that is meaningful (no ``stop_gradient`` in it): the entry must agree
with JAX's derivative there, so a kink or a tie cannot pass as a refutation.
"""
from __future__ import annotations

import re
import time

import numpy as np

from .certificate import Counterexample
from .inputs import DRAWS, INT_HIGH, integer_values, real_values, seed_for

REFUTE_TOL = 1e-6
NARROW_TOL = 1e-3
SIZES = (1, 2, 3, 5)


def _eval_dim(d: str, env: dict) -> int:
    return int(eval(d, {"__builtins__": {}}, dict(env)))  # noqa: S307 - dims are parsed names and + - * //


def _symbols(specs) -> list:
    out = set()
    for s in specs.values():
        for d in s.dims:
            out |= set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", d))
    return sorted(out)


def _has_primitive(closed, names) -> bool:
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in names:
            return True
        for v in eqn.params.values():
            inner = getattr(v, "jaxpr", None)
            if inner is not None and hasattr(getattr(inner, "jaxpr", inner), "eqns") and _has_primitive(inner, names):
                return True
    return False


def search(custom, primal, param_names, specs: dict, statics: dict, outputs=None, minimum=None,
           seconds: float = 15.0):
    """A confirmed ``(Counterexample, argument)`` showing ``custom``'s backward differs from
    JAX's derivative of ``primal``, or None. ``custom`` and ``primal`` take every positional
    parameter (``statics`` fills those without a spec)."""
    import jax
    from .validate import functions  # noqa: F401  (the widening lives there)
    from .validate import widened
    t_end = time.perf_counter() + seconds
    syms = _symbols(specs)
    minimum = dict(minimum or {})
    plans = []
    for v in SIZES:
        a = {s: max(v, minimum.get(s, 1)) for s in syms}
        if a not in plans:
            plans.append(a)
    if len(syms) > 1:
        for k in range(len(syms)):
            a = {s: max(SIZES[(i + k) % len(SIZES)], minimum.get(s, 1)) for i, s in enumerate(syms)}
            if a not in plans:
                plans.append(a)
    diff = [p for p in param_names if p in specs and specs[p].kind == "real"]
    with jax.enable_x64(True):
        struct_args = []
        for p in param_names:
            if p in specs:
                shape0 = tuple(_eval_dim(d, plans[0]) for d in specs[p].dims)
                struct_args.append(jax.ShapeDtypeStruct(shape0, np.float64 if specs[p].kind == "real"
                                                        else np.dtype("bool" if specs[p].dtype == "bool"
                                                                      else specs[p].dtype)))
        try:
            closed = jax.make_jaxpr(lambda *a: primal(*_fill(param_names, specs, statics, a)))(*struct_args)
            stops = _has_primitive(closed, {"stop_gradient"})
            narrow = _has_primitive(closed, {"convert_element_type", "reduce_precision"}) and \
                any(getattr(v.aval, "dtype", None) is not None and np.dtype(v.aval.dtype).kind == "f"
                    and np.dtype(v.aval.dtype).itemsize < 8 for e in closed.jaxpr.eqns for v in e.outvars)
        except Exception:  # noqa: BLE001 - the primal does not run: nothing to compare
            return None
        wide = widened(primal)
        for sizes in plans:
            for kind in DRAWS:
                if time.perf_counter() > t_end:
                    return None
                rng = np.random.default_rng(seed_for(kind, {_Sym(k): v for k, v in sizes.items()}, 77))
                arrays = {}
                for p in param_names:
                    if p not in specs:
                        continue
                    s = specs[p]
                    shape = tuple(_eval_dim(d, sizes) for d in s.dims)
                    if s.kind == "real":
                        arrays[p] = np.asarray(real_values(shape, kind, rng), dtype=np.float64)
                    elif s.dtype == "bool":
                        arrays[p] = rng.standard_normal(shape) > 0
                    else:
                        arrays[p] = integer_values(shape, kind, rng, sizes, None).astype(s.dtype)
                found = _compare(custom, primal, wide, param_names, specs, statics, arrays, diff, outputs, rng,
                                 stops, narrow)
                if found is not None:
                    arg, index, exp, got, cots = found
                    ce = Counterexample(dict(sizes), arg, index, exp, got, DRAWS.index(kind),
                                        inputs={k: np.asarray(v) for k, v in arrays.items()}, cotangents=cots,
                                        outputs=list(outputs) if outputs is not None else list(range(len(cots))),
                                        statics={k: repr(v) for k, v in statics.items()}, distribution=kind)
                    return ce
    return None


class _Sym:
    """A stand-in with a ``name`` for ``seed_for``'s sorting."""

    def __init__(self, name):
        self.name = name


def _fill(param_names, specs, statics, arrays):
    it = iter(arrays)
    return [statics[p] if p in statics else next(it) for p in param_names]


def _compare(custom, primal, wide, param_names, specs, statics, arrays, diff, outputs, rng, stops, narrow):
    import jax
    from .validate import relative_error
    traced = [p for p in param_names if p in specs]
    pos = [traced.index(p) for p in diff]

    def call(f, dvals):
        full = [arrays[p] for p in traced]
        for k, v in zip(pos, dvals):
            full[k] = v
        return f(*_fill(param_names, specs, statics, full))
    dvals = [np.asarray(arrays[p], dtype=np.float64) for p in diff]
    try:
        out, pull = jax.vjp(lambda *d: call(custom, d), *dvals)
        ref_out, ref_pull = jax.vjp(lambda *d: call(wide, d), *dvals)
    except Exception:  # noqa: BLE001 - not differentiable here
        return None
    leaves, tree = jax.tree_util.tree_flatten(ref_out)
    if not all(np.all(np.isfinite(np.asarray(x, dtype=np.float64))) for x in leaves):
        return None
    cots = []
    for k, x in enumerate(leaves):
        shape = np.shape(x)
        c = rng.standard_normal(shape)
        if outputs is not None and k not in outputs:
            c = np.zeros(shape)
        cots.append(c)
    ct_custom = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(out),
                                             [np.asarray(c, dtype=np.asarray(o).dtype)
                                              for c, o in zip(cots, jax.tree_util.tree_leaves(out))])
    ct_ref = jax.tree_util.tree_unflatten(tree, [np.asarray(c) for c in cots])
    try:
        g_custom, g_ref = pull(ct_custom), ref_pull(ct_ref)
    except Exception:  # noqa: BLE001
        return None
    tol = NARROW_TOL if narrow else REFUTE_TOL
    for p, gc, gr in zip(diff, g_custom, g_ref):
        gc, gr = np.asarray(gc, dtype=np.float64), np.asarray(gr, dtype=np.float64)
        if gc.shape != gr.shape or not (np.all(np.isfinite(gc)) and np.all(np.isfinite(gr))):
            continue
        err = relative_error(gc, gr)
        if err.size == 0 or float(np.max(err)) <= tol:
            continue
        index = np.unravel_index(int(np.argmax(err)), err.shape) if err.shape else ()
        exp, got = float(gr[index] if gr.shape else gr), float(gc[index] if gc.shape else gc)
        if not stops and not _fd_agrees(wide, call, diff, p, index, dvals, cots, exp):
            continue
        return p, tuple(int(i) for i in index), exp, got, {f"dy{k}" if len(cots) > 1 else "dy": c
                                                           for k, c in enumerate(cots)}
    return None


def _fd_agrees(wide, call, diff, p, index, dvals, cots, exp) -> bool:
    """JAX's derivative at the entry agrees with central differences of the primal (no
    kink or tie nearby)."""
    import jax
    k = diff.index(p)

    def f(h):
        moved = [np.array(v, copy=True) for v in dvals]
        moved[k][index] += h
        outs = jax.tree_util.tree_leaves(call(wide, moved))
        return sum(float(np.sum(np.asarray(c) * np.asarray(o, dtype=np.float64))) for c, o in zip(cots, outs))
    x = float(np.asarray(dvals[k])[index])
    vals = []
    for h in (1e-4 * max(1.0, abs(x)), 5e-5 * max(1.0, abs(x))):
        vals.append((-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h))
    if abs(vals[0] - vals[1]) > 1e-6 * max(1.0, abs(vals[1])):
        return False
    return abs(vals[1] - exp) <= 1e-5 * max(1.0, abs(exp))
