"""Inner custom derivative rules under JAX's reading (untrusted; red team RT-35).

The jaxpr importer reads a ``custom_jvp_call`` or ``custom_vjp_call`` inside the
differentiated function by its primal body, and the kernel differentiates that body. JAX
differentiates by the custom rule instead (the jvp rule, or the fwd and bwd rules). The
two readings agree for the rules of ``jax.nn.relu``, ``jnp.logaddexp`` (``softplus``),
``xlogy`` and the like, which differ from their body's derivative only on a set of
measure zero (a kink), but not in general: a gradient-scaling layer
(``defjvp(lambda p, t: (p[0], 0.5 * t[0]))`` on the identity) has body derivative 1 and
JAX derivative 1/2, and reading its body would certify the backward the user's JAX code
does not compute (finding F5: a false PROVED).

So under JAX's reading (``stop_gradient="jax"``) every custom call reachable in the
differentiated function is checked before anything is claimed: at concrete sizes (the
validation's size plan) and inputs (every input distribution), its rule's VJP, the way
JAX differentiates it (``jax.vjp`` through the call), is compared in float64 with the VJP
of its primal body with every custom rule in it stripped (the importer's reading), at
the values that reach the call (slightly perturbed, off ties) and at fresh random values
of its differentiated operands, with random cotangents; the primal outputs under
differentiation are compared as well. Any disagreement beyond float tolerance refuses
the import, naming the function, where it is defined and called, and the entry that
differs. Nothing here is trusted: it can only refuse.

What it cannot see: a rule that differs from its body only on a set the random draws
miss (an isolated point, a region far out, sizes outside the plan). So this check is the
first gate only: ``inner_rules`` then proves each call's rule in the kernel, and a claim
resting on a rule the kernel did not prove is TESTED at best (red team RT-48).
"""
from __future__ import annotations

import numpy as np

CUSTOM = ("custom_jvp_call", "custom_vjp_call")
CALLS = ("pjit", "jit", "closed_call", "core_call", "remat2", "checkpoint")

TOL = 1e-6          # relative disagreement (entrywise, floored at 1e-6 of the array's scale)
NARROW_TOL = 1e-3   # ... where the code computes in a narrower float type
MAX_SIZES = 4       # size assignments of the plan used (the first ones: every size 1, 2, 3, ...)

# fresh values of a differentiated operand per input distribution: a * |z| + b * z + c
# (the mix: magnitudes spread log-uniformly-ish over 0.01 .. 1000, either sign)
_FRESH = {"N(0,1)": (0.0, 1.0, 0.0), "N(0,10)": (0.0, 10.0, 0.0), "positive": (1.0, 0.0, 1e-3),
          "negative": (-1.0, 0.0, -1e-3), "straddle": (0.0, 3.0, 0.0), "mixed": (0.0, 0.0, -2.0)}


class RuleRefused(Exception):
    """A custom call the check cannot run (a rule JAX cannot differentiate, a loop)."""


def _inner(v):
    if hasattr(v, "eqns"):      # a bare Jaxpr: jax.checkpoint's (remat2) body (red team RT-49)
        return v
    inner = getattr(v, "jaxpr", None)
    if inner is not None and hasattr(getattr(inner, "jaxpr", inner), "eqns"):
        return inner
    return None


def _subjaxprs(eqn):
    out = []
    for v in eqn.params.values():
        for w in (v if isinstance(v, (tuple, list)) else (v,)):
            inner = _inner(w)
            if inner is not None:
                out.append(inner)
    return out


def has_custom_calls(closed) -> bool:
    """Whether a (closed) jaxpr holds a custom_jvp or custom_vjp call, at any depth."""
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in CUSTOM:
            return True
        if any(has_custom_calls(j) for j in _subjaxprs(eqn)):
            return True
    return False


def custom_call_names(closed, acc=None) -> list:
    """``['scale_grad (f.py:3)', ...]``: the custom calls of a jaxpr, outermost ones, once each."""
    acc = [] if acc is None else acc
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in CUSTOM:
            name = _describe(eqn)[0]
            if name not in acc:
                acc.append(name)
            continue
        for j in _subjaxprs(eqn):
            custom_call_names(j, acc)
    return acc


def _bind(eqn, ins):
    params = eqn.primitive.get_bind_params(eqn.params)
    outs = eqn.primitive.bind(*ins, **params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def _short(src: str) -> str:
    """``name at /a/b/f.py:3`` -> ``name (f.py:3)``."""
    import os
    if " at " not in src:
        return src
    name, where = src.split(" at ", 1)
    path, _, line = where.rpartition(":")
    return f"{name} ({os.path.basename(path)}:{line})" if path else f"{name} ({where})"


def _describe(eqn, outer: str = ""):
    """``(function, rule, call site)`` of a custom call, in words (``outer``: the call site
    of the jit it is inside, when it has none of its own)."""
    from verigrad.frontends.jaxpr_core import where_of
    body = eqn.params.get("call_jaxpr")
    info = getattr(getattr(body, "jaxpr", body), "debug_info", None)
    fun = _short(getattr(info, "func_src_info", None) or eqn.params.get("name", "?"))
    if eqn.primitive.name == "custom_jvp_call":
        rinfo = getattr(eqn.params.get("jvp_jaxpr_fun"), "debug_info", None)
        rule = "its jvp rule " + _short(getattr(rinfo, "func_src_info", None) or "?")
    else:
        f_info = getattr(eqn.params.get("fwd_jaxpr_thunk"), "debug_info", None)
        b_info = getattr(eqn.params.get("bwd"), "debug_info", None)
        rule = (f"its fwd rule {_short(getattr(f_info, 'func_src_info', None) or '?')} and bwd rule "
                f"{_short(getattr(b_info, 'func_src_info', None) or '?')}")
    where = where_of(eqn)
    if not where or where == "an unknown source line":
        where = f"{outer} (inside a call)" if outer else "an unknown source line"
    return fun, rule, where


# -- the importer's reading: every custom rule stripped ---------------------------------------

def stripped(jaxpr, consts, args) -> list:
    """The jaxpr evaluated with each custom call replaced by its primal body (at any depth,
    loops included): what the importer reads, for JAX to differentiate."""
    import jax
    from jax.extend.core import Literal
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in CUSTOM or (name in CALLS and any(has_custom_calls(j) for j in _subjaxprs(eqn))):
            body = eqn.params.get("call_jaxpr") or eqn.params.get("jaxpr")
            outs = stripped(getattr(body, "jaxpr", body), getattr(body, "consts", ()), ins)
        elif name == "scan" and has_custom_calls(eqn.params["jaxpr"]):
            outs = _scan(eqn, ins, lambda j, c, a: stripped(j, c, a))
        elif any(has_custom_calls(j) for j in _subjaxprs(eqn)):
            raise RuleRefused(f"a custom rule inside {name} is not supported")
        else:
            outs = _bind(eqn, ins)
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    del jax
    return [read(v) for v in jaxpr.outvars]


def _scan(eqn, ins, run):
    """``lax.scan`` of the eqn's body, each step computed by ``run(jaxpr, consts, args)``."""
    from jax import lax
    p = eqn.params
    body = p["jaxpr"]
    nc, nk = p["num_consts"], p["num_carry"]
    consts, init, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]

    def step(carry, x):
        outs = run(body.jaxpr, body.consts, list(consts) + list(carry) + list(x))
        return outs[:nk], outs[nk:]
    carry, ys = lax.scan(step, list(init), list(xs), length=p["length"], reverse=p["reverse"])
    return list(carry) + list(ys)


# -- the check: JAX's reading against the importer's, at every custom call ---------------------

def _inexact(x) -> bool:
    return np.issubdtype(np.dtype(getattr(x, "dtype", np.float64)), np.inexact)


class _Sites:
    """What the interpretation records: one entry per custom call reached (per size)."""

    def __init__(self, key, fresh_abc):
        self.key, self.abc = key, fresh_abc
        self.labels = []         # (description, [component names]) per site
        self.values = []         # per site: [(err, rule value, body value)] per component
        self.errors = []         # (description, message): a call that could not be checked
        self.count = 0

    def normal(self, shape, dtype):
        """Standard normal values from an integer hash of the position, the draw's seed and
        a counter (exact integer arithmetic: however XLA fuses it, every use of one array
        sees the same numbers; a counter-based generator would compile far slower)."""
        import jax.numpy as jnp
        from jax import lax
        self.count += 1
        n = int(np.prod(shape)) if shape else 1

        def bits(k):
            h = lax.iota(jnp.uint32, n) * jnp.uint32(0x9E3779B1) + self.key + jnp.uint32(
                (0x632BE5AB * (2 * self.count + k)) % 2 ** 32)
            for mul, shift in ((0x85EBCA6B, 16), (0xC2B2AE35, 13), (0x27D4EB2F, 16)):
                h = (h ^ (h >> shift)) * jnp.uint32(mul)
            return (h ^ (h >> 15)).astype(jnp.float64) * 2.0 ** -32 + 2.0 ** -33
        z = jnp.sqrt(-2.0 * jnp.log(bits(0))) * jnp.cos(2.0 * jnp.pi * bits(1))
        return jnp.reshape(z, shape).astype(dtype)

    def check(self, eqn, ins, deps, outer=""):
        import jax
        import jax.numpy as jnp
        diff = [k for k, (x, d) in enumerate(zip(ins, deps)) if d and _inexact(x)]
        if not diff:
            return
        desc = _describe(eqn, outer)
        body = eqn.params["call_jaxpr"]

        def rule_fn(full):
            return _bind(eqn, full)

        def body_fn(full):
            return stripped(body.jaxpr, body.consts, full)

        flowing = []
        fresh = []
        a, b, c = self.abc
        for k in diff:
            x = jnp.asarray(ins[k])
            z = self.normal(x.shape, x.dtype)
            flowing.append((x + 1e-6 * (1.0 + jnp.abs(x)) * z).astype(x.dtype))
            z = self.normal(x.shape, jnp.float64)
            u = self.normal(x.shape, jnp.float64)
            # a |z| + b z + c; with c < 0 (the mix): sign(z) 10^(2.5 tanh(u) + 0.5), from 0.01 to 1000
            mix = jnp.sign(z) * 10.0 ** (2.5 * jnp.tanh(u) + 0.5)
            fresh.append(jnp.where(c < -1.0, mix, a * jnp.abs(z) + b * z + c).astype(x.dtype))
        comps, names = [], []
        for tag, point in (("at the values reaching it", flowing), ("at fresh values", fresh)):
            def call(fn, vals):
                full = list(ins)
                for k, v in zip(diff, vals):
                    full[k] = v
                return [o for o in fn(full) if _inexact(o)]
            try:
                out_r, pull_r = jax.vjp(lambda *v: call(rule_fn, v), *point)
                out_b, pull_b = jax.vjp(lambda *v: call(body_fn, v), *point)
                cts = [self.normal(jnp.shape(o), jnp.result_type(o)) for o in out_b]
                g_r = pull_r([ct.astype(jnp.result_type(o)) for ct, o in zip(cts, out_r)])
                g_b = pull_b(cts)
            except RuleRefused as e:
                self.errors.append((desc, str(e)))
                return
            except Exception as e:  # noqa: BLE001 - JAX cannot differentiate through the rule
                msg = str(e).strip().splitlines()
                self.errors.append((desc, f"JAX cannot differentiate it ({type(e).__name__}: "
                                          f"{msg[0] if msg else ''})"))
                return
            for j, (r, o) in enumerate(zip(out_r, out_b)):
                comps.append((r, o))
                names.append(f"its output {j} under differentiation, {tag}")
            for j, (r, o) in enumerate(zip(g_r, g_b)):
                comps.append((r, o))
                names.append(f"the cotangent of its operand {diff[j]}, {tag}")
        self.labels.append((desc, names))
        self.values.append(comps)


def _disagreement(rule, body):
    """``(err, rule value, body value)`` at the entry where they differ most: relative,
    floored at 1e-6 of the larger array's scale; entries where the body is not finite are
    outside its domain (skipped); a rule not finite where the body is, is a disagreement."""
    r = np.ravel(np.asarray(rule, dtype=np.float64))
    b = np.ravel(np.asarray(body, dtype=np.float64))
    if r.shape != b.shape:
        return float("inf"), float("nan"), float("nan")
    if r.size == 0:
        return 0.0, 0.0, 0.0
    with np.errstate(all="ignore"):
        fb, fr = np.isfinite(b), np.isfinite(r)
        both = fb & fr
        scale = max(float(np.max(np.abs(b[both]), initial=0.0)), float(np.max(np.abs(r[both]), initial=0.0)))
        den = np.maximum(np.maximum(np.abs(r), np.abs(b)), 1e-6 * scale + 1e-300)
        err = np.where(both, np.abs(r - b) / den, 0.0)
        err = np.where(fb & ~fr, np.inf, err)
    i = int(np.argmax(err))
    return float(err[i]), float(r[i]), float(b[i])


def _live(jaxpr, out_live) -> set:
    """The variables of ``jaxpr`` a differentiated output depends on other than through
    ``stop_gradient`` (conservatively: every operand of a live equation)."""
    from jax.extend.core import Literal
    live = {v for v, keep in zip(jaxpr.outvars, out_live) if keep and not isinstance(v, Literal)}
    for eqn in reversed(jaxpr.eqns):
        if eqn.primitive.name == "stop_gradient" or not any(v in live for v in eqn.outvars):
            continue
        live.update(v for v in eqn.invars if not isinstance(v, Literal))
    return live


def _interpret(jaxpr, consts, args, deps, sites: _Sites, out_live=None, outer: str = ""):
    """Run the jaxpr (JAX's meaning), checking each custom call reached; ``deps`` says which
    values depend on the differentiated arguments (stop_gradient cuts the dependence),
    ``out_live`` which outputs are differentiated (a custom call none of them depends on
    but through ``stop_gradient`` is not differentiated by JAX)."""
    from jax.extend.core import Literal
    from verigrad.frontends.jaxpr_core import where_of
    live = _live(jaxpr, [True] * len(jaxpr.outvars) if out_live is None else out_live)
    env = {}

    def read(v):
        return (v.val, False) if isinstance(v, Literal) else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = (c, False)
    for v, a, d in zip(jaxpr.invars, args, deps):
        env[v] = (a, d)
    for eqn in jaxpr.eqns:
        pairs = [read(v) for v in eqn.invars]
        ins, ds = [p[0] for p in pairs], [p[1] for p in pairs]
        name = eqn.primitive.name
        subs = _subjaxprs(eqn)
        used = [v in live for v in eqn.outvars]
        if name in CUSTOM:
            if any(used):
                sites.check(eqn, ins, ds, outer)
            outs, od = _bind(eqn, ins), [any(ds)] * len(eqn.outvars)
        elif name == "stop_gradient":
            outs, od = _bind(eqn, ins), [False]
        elif name in CALLS and any(has_custom_calls(j) for j in subs):
            body = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
            here = where_of(eqn)
            res = _interpret(getattr(body, "jaxpr", body), getattr(body, "consts", ()), ins, ds, sites, used,
                             outer if not here or here == "an unknown source line" else here)
            outs, od = [r[0] for r in res], [r[1] for r in res]
        elif name == "scan" and has_custom_calls(eqn.params["jaxpr"]):
            outs, od = _unrolled_scan(eqn, ins, ds, sites, outer) if any(used) else \
                (_bind(eqn, ins), [any(ds)] * len(eqn.outvars))
        elif any(has_custom_calls(j) for j in subs) and any(used):
            raise RuleRefused(f"a custom rule inside {name} is not supported")
        else:
            outs, od = _bind(eqn, ins), [any(ds)] * len(eqn.outvars)
        for v, o, d in zip(eqn.outvars, outs, od):
            env[v] = (o, d and _inexact(o))
    return [read(v) for v in jaxpr.outvars]


def _unrolled_scan(eqn, ins, ds, sites, outer=""):
    """A scan with custom calls in its body, step by step (the importer unrolls it too)."""
    import jax.numpy as jnp
    p = eqn.params
    body = p["jaxpr"]
    nc, nk, n = p["num_consts"], p["num_carry"], p["length"]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    dc, dk, dx = ds[:nc], ds[nc:nc + nk], ds[nc + nk:]
    ys, dys = None, None
    steps = range(n - 1, -1, -1) if p["reverse"] else range(n)
    outs_at = {}
    for t in steps:
        res = _interpret(body.jaxpr, body.consts, list(consts) + list(carry) + [x[t] for x in xs],
                         list(dc) + list(dk) + list(dx), sites, None, outer)
        carry, dk = [r[0] for r in res[:nk]], [r[1] for r in res[:nk]]
        outs_at[t] = res[nk:]
    ny = len(eqn.outvars) - nk
    ys = [jnp.stack([outs_at[t][j][0] for t in range(n)]) for j in range(ny)]
    dys = [any(outs_at[t][j][1] for t in range(n)) for j in range(ny)]
    return list(carry) + ys, list(dk) + dys


def _reached(closed, acc=None) -> list:
    """The custom call eqns JAX differentiates through: outermost ones, inside calls and loops."""
    acc = [] if acc is None else acc
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in CUSTOM:
            acc.append(eqn)
        elif eqn.primitive.name != "stop_gradient":
            for j in _subjaxprs(eqn):
                _reached(j, acc)
    return acc


def trace_rules(closed_f) -> None:
    """Trace each custom rule JAX would differentiate ``closed_f`` with, at the symbolic
    sizes it was imported at, watching for size branches (``jaxpr.trace``'s watch): a rule
    whose Python code depends on a size's value (``if x.shape[0] > 4:``) cannot be checked
    at a few sizes for all of them, and stops the import with a ``SizeBranchError``."""
    import jax
    from verigrad.frontends.jaxpr import JaxprImportError, SizeBranchError, _SizeWatch
    for eqn in _reached(closed_f):
        ins = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.invars]
        diff = [k for k, v in enumerate(eqn.invars) if _inexact(v.aval)]
        outs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.outvars if _inexact(v.aval)]

        def pulled(dvals, cts, ins=ins, diff=diff, eqn=eqn):
            def call(*vals):
                full = [jax.numpy.zeros(s_.shape, s_.dtype) for s_ in ins]
                for k, v in zip(diff, vals):
                    full[k] = v
                return [o for o in _bind(eqn, full) if _inexact(o)]
            _, pull = jax.vjp(call, *dvals)
            return pull(list(cts))
        fun = _describe(eqn)[0]
        with jax.enable_x64(True), _SizeWatch(f"the custom rule of {fun}") as watch:
            try:
                jax.make_jaxpr(pulled)([ins[k] for k in diff], outs)
            except SizeBranchError:
                raise
            except Exception as e:  # noqa: BLE001 - JAX cannot differentiate through the rule here
                if watch.found:
                    raise watch.found[0] from None
                msg = str(e).strip().splitlines()
                raise JaxprImportError(f"the custom rule of {fun}, called at {_describe(eqn)[2]}, cannot be "
                                       f"differentiated by JAX at symbolic sizes ({type(e).__name__}: "
                                       f"{msg[0] if msg else ''})", located=True) from None
        if watch.found:
            raise watch.found[0]


def check(ob) -> str | None:
    """None when every custom call in ``ob``'s differentiated function has a rule that
    agrees with its primal body's derivative at every sample; else why not, in words.
    One program runs every size assignment (one XLA compile); each input distribution is
    one call of it."""
    import jax
    from .inputs import DRAW_TEXT, DRAWS, seed_for
    from .validate import QUICK_COMPILE, _variables, _where, narrows, plan_for
    if getattr(ob, "given_structs", False):
        return ("the function is built at symbolic sizes, so the custom rules inside it "
                f"({', '.join(custom_call_names(ob.jaxprs[0]))}) cannot be compared with their primal bodies")
    plan = plan_for(ob)[:MAX_SIZES]
    variables = _variables(ob)
    real = [s_.kind == "real" for s_, _ in ob.args]
    tol = NARROW_TOL if narrows(ob) else TOL
    with jax.enable_x64(True):
        draws, closed = [], []          # [size][kind] -> arrays; [size] -> concrete jaxpr
        for sizes in plan:
            row = []
            for kind in DRAWS:
                rng = np.random.default_rng(seed_for(kind, sizes, 35))
                values = ob.domain.draw(variables, sizes, kind, rng)
                row.append([ob.domain.jax_value(v, values[v]) for _, v in ob.args])
            try:
                c = jax.make_jaxpr(ob.primal_fn)(*row[0])
            except Exception as e:  # noqa: BLE001 - validation reports a function that does not run
                return f"tracing the function at {_where(sizes)} failed: {type(e).__name__}: {e}"
            if has_custom_calls(c):
                draws.append((sizes, row))
                closed.append(c)
        if not closed:
            return None
        holder = []
        k = len(ob.args)
        sel = set(ob.selected())
        live_out = [j in sel for j in range(len(closed[0].jaxpr.outvars))]

        def program(seed, abc, *flat):
            holder.clear()
            out = []
            for g, c in enumerate(closed):
                sites = _Sites(seed + np.uint32(7919 * g), (abc[0], abc[1], abc[2]))
                _interpret(c.jaxpr, c.consts, list(flat[g * k:(g + 1) * k]), real, sites, live_out)
                holder.append(sites)
                out.append(sites.values)
            return out
        try:
            flat0 = [a for _, row in draws for a in row[0]]
            compiled = jax.jit(program).lower(np.uint32(0), np.zeros(3), *flat0).compile(QUICK_COMPILE)
        except RuleRefused as e:
            return str(e)
        for sites in holder:
            if sites.errors:
                (fun, rule, where), why = sites.errors[0]
                return f"the custom rule of {fun}, called at {where}, cannot be checked: {why}"
        for r, kind in enumerate(DRAWS):
            flat = [a for _, row in draws for a in row[r]]
            try:
                out = compiled(np.uint32(104729 * (r + 1)), np.asarray(_FRESH[kind], dtype=np.float64), *flat)
            except Exception as e:  # noqa: BLE001 - a rule that keeps a value of another trace (a custom_jvp's
                # array nondiff_argnums: its rule closes over the tracer of the trace it was called in)
                msg = str(e).strip().splitlines()
                return (f"the custom rules ({', '.join(custom_call_names(closed[0]))}) could not be run at "
                        "concrete sizes; the usual cause is a rule keeping a value of the trace it was called "
                        "in, as a custom_jvp given an array for its nondiff_argnums does (pass that argument as "
                        "an ordinary one and "
                        f"ignore its tangent in the rule) ({type(e).__name__}: {msg[0] if msg else ''})")
            for (sizes, _), sites, per_size in zip(draws, holder, out):
                for (desc, names), comps in zip(sites.labels, per_size):
                    for name, (rv_, bv_) in zip(names, comps):
                        err, rv, bv = _disagreement(rv_, bv_)
                        if not err <= tol:
                            fun, rule, where = desc
                            return (f"the custom rule of {fun}, called at {where}, is not the derivative of its "
                                    f"primal body: {name} is {float(rv):.6g} by {rule}, {float(bv):.6g} by the "
                                    f"body ({_where(sizes)}, {DRAW_TEXT[kind]} inputs). JAX differentiates by the "
                                    "rule and the importer reads the body, so nothing is claimed with JAX's "
                                    "reading of derivatives (--stop-gradient jax, the default); "
                                    "--stop-gradient identity reads custom rules by their primal bodies "
                                    "(the mathematical reading), as the certificate then states")
    return None
