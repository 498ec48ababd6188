"""Translation validation and confirmation by JAX (untrusted; independent of the kernel).

The importer is not trusted, so every import is checked against JAX itself: the imported
terms are evaluated in float64 (``verigrad.certify.evaluate``) at two random concrete size
assignments and random inputs, and compared with running the traced functions on the
same arrays. A disagreement is an importer bug; the certificate then claims nothing.

A counterexample found on the imported terms is confirmed the same way before it is
reported: the user's backward is run by JAX at the counterexample's inputs and compared
with central finite differences of the user's primal function, also run by JAX. Neither
side touches the kernel or the importer, so a REFUTED certificate never rests on them.
"""
from __future__ import annotations

import numpy as np

from .evaluate import EvalError, evaluate

TOL = 1e-7          # relative agreement required of an import (float64 on both sides)
REFUTE_TOL = 1e-6   # relative difference that refutes (as ``counterexample.REL_TOL``)


FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


_COMPILED: dict = {}   # (function, argument shapes and dtypes) -> compiled executable


def _jax_call(fn, arrays, structs=None):
    """Run ``fn`` on concrete arrays in float64, compiled whole (one XLA compile per shape
    instead of one per operation, and a quick one: these arrays are tiny).

    With ``structs`` (the symbolic shapes it was imported at) the function is exported at
    those shapes and the export is called: a function built at symbolic sizes closes over
    symbolic dimensions and cannot be re-traced at concrete ones, while its export
    computes exactly what was imported."""
    import jax
    key = (fn, tuple((np.shape(a), np.asarray(a).dtype.str) for a in arrays))
    with jax.enable_x64(True):
        compiled = _COMPILED.get(key)
        if compiled is None:
            if structs is not None:
                exported = jax.export.export(jax.jit(fn))(*structs)
                compiled = jax.jit(exported.call)
            else:
                compiled = jax.jit(fn).lower(*arrays).compile(FAST_COMPILE)
            _COMPILED[key] = compiled
            if len(_COMPILED) > 256:
                _COMPILED.pop(next(iter(_COMPILED)))
        out = compiled(*arrays)
        leaves = jax.tree_util.tree_leaves(out)
        return [np.asarray(x).astype(np.float64) if np.asarray(x).dtype.kind in "biuf" else np.asarray(x)
                for x in leaves]


def _close(a: np.ndarray, b: np.ndarray, tol: float = TOL) -> float:
    """The largest relative difference (0 when within ``tol``)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    scale = 1.0 + max(float(np.max(np.abs(b), initial=0.0)), float(np.max(np.abs(a), initial=0.0)))
    diff = float(np.max(np.abs(a - b), initial=0.0)) / scale
    return diff if diff > tol else 0.0


def size_draws(symbols, seeds=(0, 1)):
    """Two concrete size assignments: small, different, reproducible."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(7919 + seed)
        lo = 2 if seed == 0 else 1
        out.append({s: int(rng.integers(max(s.lower, lo), max(s.lower, lo) + 2)) for s in symbols})
    return out


def _symbols(ob):
    syms = set()
    for _, v in ob.args:
        syms |= set(v.sizes)
    for c in ob.cots:
        syms |= set(c.sizes)
    return sorted(syms, key=lambda s: s.name)


def _structs(ob, cots):
    """The symbolic shapes of the arguments and cotangents ``ob`` was traced at."""
    import jax
    outs = jax.tree_util.tree_leaves(jax.eval_shape(ob.primal_fn, *ob.structs))
    return list(ob.structs) + [jax.ShapeDtypeStruct(o.shape, c.dtype) for o, c in zip(outs, cots)]


def inputs(ob, sizes, rng):
    """Values for every argument, cotangent and model variable; the JAX arrays."""
    variables = [v for _, v in ob.args] + list(ob.cots) + list(ob.domain.onehot_vars.values())
    values = ob.domain.sample(variables, sizes, rng)
    args = [ob.domain.jax_value(v, values[v]) for _, v in ob.args]
    cots = [np.asarray(values[c]) for c in ob.cots]
    return values, args, cots


def validate(ob, seeds=(0, 1)) -> str | None:
    """None when the imported terms agree with JAX, else a message naming the value."""
    for sizes in size_draws(_symbols(ob), seeds):
        rng = np.random.default_rng(12345)
        values, args, cots = inputs(ob, sizes, rng)
        where = ", ".join(f"{s.name}={v}" for s, v in sizes.items())
        pairs = [(f"output {k} of {ob.name}", t) for k, t in enumerate(ob.primal)]
        k = len(args)
        # ``at_sizes`` (optional) gives the functions rebuilt at concrete sizes, for a
        # function built at symbolic sizes that JAX's export cannot run at them.
        at_sizes = getattr(ob, "at_sizes", None)
        primal_fn, combined_fn = at_sizes(sizes) if at_sizes else (ob.primal_fn, ob.combined_fn)
        symbolic = getattr(ob, "symbolic_closure", False) and not at_sizes
        try:
            both = _jax_call(lambda *a: (primal_fn(*a[:k]), combined_fn(*a)), args + cots,
                             _structs(ob, cots) if symbolic else None)
            jax_f, jax_c = both[:len(ob.primal)], both[len(ob.primal):]
        except Exception as e:  # noqa: BLE001 - the user's function failed on concrete inputs
            return f"running {ob.name} with JAX at {where} failed: {type(e).__name__}: {e}"
        checks = list(zip(pairs, jax_f))
        n_out = len(ob.fwd_out) if ob.fwd_out is not None else 0
        if ob.fwd_out is not None:
            checks += [((f"primal output {k} of the fwd rule", t), a) for k, (t, a) in
                       enumerate(zip(ob.fwd_out, jax_c[:n_out]))]
        for (p, t), a in zip(ob.returned, jax_c[n_out:]):
            if ob.cotangents.get(p) is t and t is not None:
                checks.append(((f"the cotangent of {p}", t), a))
        for (label, tensor), want in checks:
            try:
                got = np.asarray(evaluate(tensor.term(), sizes, values))
            except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError) as e:
                return f"could not evaluate the imported {label} at {where}: {e}"
            want = np.asarray(want)
            if want.shape != got.shape:
                return f"the imported {label} has shape {got.shape} at {where}, JAX gives {want.shape}"
            # Where JAX's value is not finite (log or sqrt of a negative input) the function is
            # not defined and the kernel's total conventions need not agree: compare elsewhere.
            defined = np.isfinite(want)
            got, want = np.where(defined, got, 0.0), np.where(defined, want, 0.0)
            bad = _close(got, want)
            if bad:
                pos = np.unravel_index(int(np.argmax(np.abs(got - want))), got.shape) if got.shape else ()
                return (f"the imported {label} disagrees with JAX at {where}: entry {tuple(map(int, pos))} is "
                        f"{float(got[pos]):.10g}, JAX computes {float(want[pos]):.10g}")
    return None


def confirm(ob, argument: str, index: tuple, values: dict, sizes: dict) -> tuple:
    """Run JAX at a counterexample: ``(expected, got, confirmed)`` for the cotangent of
    ``argument`` at ``index`` (``argument`` may be 'forward output k')."""
    args = [ob.domain.jax_value(v, values[v]) for _, v in ob.args]
    cots = [np.asarray(values[c]) for c in ob.cots]
    jax_c = _jax_call(ob.combined_fn, args + cots)
    n_out = len(ob.fwd_out) if ob.fwd_out is not None else 0
    if argument.startswith("forward output "):
        k = int(argument.split()[-1])
        want = _jax_call(ob.primal_fn, args)[k]
        got, exp = float(jax_c[k][index]), float(want[index])
        return exp, got, _differs(exp, got)
    returned = [p for p, _ in ob.returned]
    got = float(np.asarray(jax_c[n_out + returned.index(argument)])[index]) if argument in returned else 0.0
    pos = [s.name for s, _ in ob.args].index(argument)
    exp, reliable = _fd_vjp(ob, args, cots, pos, index)
    return exp, got, reliable and _differs(exp, got)


def _differs(a: float, b: float) -> bool:
    scale = max(abs(a), abs(b), 1e-6)
    return abs(a - b) / scale > REFUTE_TOL


def _fd_vjp(ob, args, cots, pos, index):
    """``sum_j <dy_j, d f_j / d x[index]>`` by fourth-order central differences of the
    primal run by JAX, with a step-halving check of its accuracy."""
    def directional(h):
        vals = []
        for t in (2 * h, h, -h, -2 * h):
            moved = [np.array(a, copy=True) for a in args]
            moved[pos][index] += t
            outs = _jax_call(ob.primal_fn, moved)
            vals.append(sum(float(np.sum(dy * o)) for dy, o in zip(cots, outs)))
        return (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * h)
    x = float(np.asarray(args[pos])[index])
    h = 1e-3 * max(1.0, abs(x))
    a, b = directional(h), directional(h / 2)
    reliable = abs(a - b) <= 1e-7 * max(1.0, abs(a))
    return b, reliable

