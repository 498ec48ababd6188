"""Inner custom rules proved in the kernel, not only compared (untrusted driver).

Under JAX's reading of derivatives (``--stop-gradient jax``, the default) the importer
reads an inner ``custom_jvp`` / ``custom_vjp`` call by its primal body while JAX
differentiates the call by its rule. ``custom_rules.check`` compares the two numerically;
a rule that differs only where no draw looks (a gradient clip binding beyond 1e5, say)
passes that comparison, and a claim resting on it alone would be a PROVED the kernel did
not prove. So each such call is certified here as a claim of its own, at the symbolic
sizes of the outer function: its primal body is the forward and the VJP JAX computes
through the rule is the backward, so the kernel proves ``rule VJP = J_body^T ct`` for
every size and every operand value. By the chain rule, JAX's derivative of the outer
function is then the body reading's, which the outer claim is about.

Each inner certificate's conditions are stated about the call's operands (they are
intermediate values of the outer function), and its axioms join the outer certificate's.
An inner claim that is not PROVED leaves the outer claim with numeric evidence for that
link only: the outer certificate is then TESTED at best, saying which call and why.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .custom_rules import CALLS, CUSTOM, _bind, _describe, _inexact, _live, _subjaxprs, stripped


@dataclass
class InnerRule:
    """The verdict on one inner custom call: ``what`` names the function, its rule and
    where it is called; ``status`` its claim's, with its axioms and side conditions, and
    ``why`` when it is not PROVED; ``concrete`` for a call of the import at the concrete
    size (proved there only, not for every size)."""
    what: str
    status: str
    axioms: list = field(default_factory=list)
    conditions: list = field(default_factory=list)
    why: str = ""
    concrete: bool = False


def _operands(eqn, minimum):
    """``{name: ArgSpec}`` of the call's operands at the outer function's symbolic sizes."""
    import jax
    from .specs import to_spec
    return {f"a{k}": to_spec(f"a{k}", jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype), minimum)
            for k, v in enumerate(eqn.invars)}


def _reached(jaxpr, deps, out_live, acc):
    """``acc`` gets ``(eqn, [operand depends on a differentiated argument])`` for each
    custom call JAX differentiates ``jaxpr`` through (outermost ones, inside calls and
    loops): ``deps`` says which of ``jaxpr``'s inputs depend on a differentiated argument,
    ``out_live`` which outputs are differentiated (a call whose outputs reach them only
    through ``stop_gradient`` is not). Returns the outputs' dependence. Conservative:
    everything a loop or a branch computes depends on all its operands."""
    from jax.extend.core import Literal
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    live = _live(jaxpr, out_live)
    dep = {v: d for v, d in zip(jaxpr.invars, deps)}

    def of(v):
        return False if isinstance(v, Literal) else dep.get(v, False)
    for eqn in jaxpr.eqns:
        ds = [of(v) and _inexact(v.aval) for v in eqn.invars]
        used = [v in live for v in eqn.outvars]
        name = eqn.primitive.name
        body = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
        if name in CUSTOM:
            if any(used):
                acc.append((eqn, ds))
            out = [any(ds)] * len(eqn.outvars)
        elif name == "stop_gradient":
            out = [False] * len(eqn.outvars)
        elif name in CALLS and body is not None:
            out = _reached(body, ds, used, acc)
        else:
            if any(used):
                for sub in _subjaxprs(eqn):
                    inner = getattr(sub, "jaxpr", sub)
                    _reached(inner, [any(ds)] * len(inner.invars), [True] * len(inner.outvars), acc)
            out = [any(ds)] * len(eqn.outvars)
        for v, d in zip(eqn.outvars, out):
            dep[v] = d
    return [of(v) for v in jaxpr.outvars]


def _pair(eqn, diff, zero=False):
    """(forward, fwd, backward, nondiff) of one custom call: the body with every custom rule in it
    stripped (the importer's reading); the primal JAX computes when it differentiates the
    call (a custom_vjp's fwd rule) and the VJP it computes through the call's rule
    (``backward(args, res, ct)``, one cotangent per operand in ``diff``). With ``zero``,
    the pair of a call whose outputs reach only outputs not claimed about: the forward is
    0 and the backward is the rule's VJP at a zero cotangent (no fwd claim)."""
    import jax
    import jax.numpy as jnp
    body = eqn.params["call_jaxpr"]
    outs = [k for k, v in enumerate(eqn.outvars) if _inexact(v.aval)]
    # the integer and boolean outputs: JAX carries on with the rule's (a custom_jvp rule's primal
    # output, a custom_vjp's fwd rule's), which must be the body's too (red team rt5a: a rule's
    # integer output 1 where the body's is 0 was never compared). Claimed as real outputs held by
    # stop_gradient (no derivative), so the fwd claim compares them; not with ``zero``.
    discrete = [] if zero else [k for k, v in enumerate(eqn.outvars)
                                if not _inexact(v.aval) and v.aval.dtype != jax.dtypes.float0]
    real = jnp.result_type(float)

    def as_real(vals):
        return tuple(jax.lax.stop_gradient(jnp.asarray(v).astype(real)) for v in vals)

    def forward(*args):
        got = stripped(body.jaxpr, body.consts, list(args))
        return tuple(0.0 * got[k] if zero else got[k] for k in outs) + as_real(got[k] for k in discrete)

    def under_vjp(args):
        def call(*vals):
            full = list(args)
            for k, v in zip(diff, vals):
                full[k] = v
            got = _bind(eqn, full)
            return tuple(got[k] for k in outs), tuple(got[k] for k in discrete)
        return jax.vjp(call, *[args[k] for k in diff], has_aux=True)

    def primal_under_vjp(*args):
        # a custom_vjp's fwd rule computes the primal JAX carries on with: it must be the body's
        primal, _, aux = under_vjp(list(args))
        return tuple(primal) + as_real(aux), None

    def backward(args, _res, ct):
        ct = tuple(ct)[:len(outs)]
        return tuple(under_vjp(args)[1](tuple(0.0 * c for c in ct) if zero else ct))
    nondiff = tuple(k for k in range(len(eqn.invars)) if k not in diff)
    return forward, None if zero else primal_under_vjp, backward, nondiff


def _signs(ob, eqn, diff) -> list:
    """``a1 > 0``-style assumptions for the call's operands that are positive (or
    nonnegative) wherever the outer function calls it, as the kernel's structural sign
    shows of the terms the importer read for them (``xlogy(x*x + 1, ...)``). The inner
    claim is proved under them and the outer certificate states them as side conditions,
    so a sign misjudged here could only make the claim narrower, never false."""
    from verigrad.kernel.normal import Normalizer
    seen = ob.custom_operands.get(id(eqn), []) if hasattr(ob, "custom_operands") else []
    if not seen:
        return []
    nz = Normalizer()
    out = []
    for k, v in enumerate(eqn.invars):
        if not _inexact(v.aval):
            continue
        signs = set()
        for ins in seen:
            try:
                t = ins[k]
                signs.add(nz.sign(t.term()) if t.kind == "real" and t.const is None else None)
            except Exception:  # noqa: BLE001 - no term (an infinite constant): nothing is known
                signs.add(None)
        if signs == {"pos"}:
            out.append(f"a{k} > 0")
        elif signs <= {"pos", "nonneg"}:
            out.append(f"a{k} >= 0")
    return out


def _conditions_at_calls(ob, inner, eqn, cert, failing) -> str | None:
    """Why the inner claim's side conditions are not shown to hold almost everywhere at the
    values that reach the call, or None. The inner claim drew its operands freely, so a
    condition failing only on a null set of operand values (``a0 != 0``) passed there; but
    the outer function may feed the call an operand that is 0 on a whole region
    (``relu(x)``), where JAX's rule is then what the kernel did not prove (red team RT-49).
    So each condition is read at the operand terms the importer read at each call (the
    operands substituted for ``a0, a1, ...``) and checked as the outer claim's are."""
    from types import SimpleNamespace
    from verigrad.kernel import KernelError
    from verigrad.kernel import terms as T
    from verigrad.kernel.theorem import Condition
    conditioned = [th for th in getattr(cert, "theorems", []) if any(c.kind != "smooth" for c in th.conds)]
    if not conditioned:
        return None
    seen = ob.custom_operands.get(id(eqn), []) if hasattr(ob, "custom_operands") else []
    if not seen:
        return "its side conditions could not be stated about the values reaching the call"
    excess = {m.name: m for m in getattr(inner.domain, "model_vars", [])}   # a0 > 0 is a0 = a0_excess
    stops = dict(getattr(ob, "stopped", []))       # stop_gradient values, in the outer's arguments
    for ins in seen:
        mapping = {}
        try:
            for (spec, var), t in zip(inner.args, ins):
                term = T.subst(t.term(), stops) if stops else t.term()
                mapping[var] = term
                if f"{var.name}_excess" in excess:
                    mapping[excess[f"{var.name}_excess"]] = term
            for th in conditioned:
                conds = {Condition(c.kind, T.subst(c.term, mapping)) for c in th.conds}
                bad = failing(ob, SimpleNamespace(conds=frozenset(conds)))
                if bad:
                    return f"at the values reaching the call, {bad}"
        except (KernelError, ValueError, TypeError) as e:
            return f"its side conditions could not be stated about the values reaching the call ({e})"
    return None


MAX_PATTERNS = 7    # a symbolic_zeros rule: at most this many sets of differentiated operands proved


def _patterns(eqn, diff) -> list | None:
    """The sets of operands the rule must be proved for: ``diff`` (those that depend on a
    differentiated argument). But JAX hands a rule with ``symbolic_zeros`` a symbolic zero
    for an operand it does not differentiate, and the rule may branch on it; and JAX's
    zeros are not exactly the dependence seen here (``sign(x)`` depends on ``x`` and has a
    symbolic zero tangent), so such a rule is proved for every nonempty subset of ``diff``
    (red team RT-49); None when there are too many."""
    from itertools import combinations
    if not eqn.params.get("symbolic_zeros"):
        return [diff]
    out = [list(c) for r in range(len(diff), 0, -1) for c in combinations(diff, r)]
    return out if len(out) <= MAX_PATTERNS else None


def _one(ob, eqn, diff, fun, decide, failing, run, progress, minimum, zero=False):
    """``(status, axioms, conditions, why)`` of the claim that the VJP JAX computes through
    the call's rule, differentiating the operands in ``diff``, is its body's (with ``zero``:
    that it is 0 at a zero cotangent)."""
    import jax
    from verigrad.frontends.jaxpr import JaxprImportError
    from .obligations import Settings, build
    try:
        specs = _operands(eqn, minimum)
        forward, fwd, backward, nondiff = _pair(eqn, diff, zero)
        # traced in the outer function's symbolic scope (its sizes are the call's)
        structs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.invars]
        inner = build(f"{fun} (inner custom rule)", forward, fwd, backward, list(specs), specs,
                      nondiff=nondiff, structs=structs, settings=Settings(minimum=minimum, stop_gradient="jax"))
        inner.symbolic_closure = True       # validated through jax.export at the outer's sizes
        cert = decide(inner, run, progress, _signs(ob, eqn, diff))
    except (JaxprImportError, ValueError, TypeError) as e:
        return "UNKNOWN", [], [], f"its claim could not be stated: {e}"
    status = cert.status
    why = cert.detail or cert.evidence or ""
    if status == "PROVED" and (bad := _conditions_at_calls(ob, inner, eqn, cert, failing)):
        status, why = "UNKNOWN", f"proved only under a condition on its operands: {bad}"
    if cert.status == "REFUTED" and cert.counterexample is not None:
        why = f"its rule is not its body's derivative ({cert.counterexample})"
    return status, list(cert.axioms), list(cert.side_conditions), why


def prove(ob, decide, failing, run, progress) -> list[InnerRule]:
    """One ``InnerRule`` per custom call JAX differentiates ``ob``'s function through
    (outermost calls; their bodies' own calls are stripped with them). ``decide`` is
    certify's ``_decide`` (certify proves each pair as it proves a user's), ``failing``
    its check that a theorem's side conditions hold almost everywhere on ``ob``'s inputs
    (passed in: this module is below ``api``)."""
    minimum = dict(getattr(ob, "minimum", {}) or {})
    verdicts = []
    sites = []
    closed = ob.jaxprs[0]
    selected = set(ob.selected())
    _reached(closed, [s_.kind == "real" for s_, _ in ob.args],
             [k in selected for k in range(len(closed.jaxpr.outvars))], sites)
    claimed = {(id(eqn), tuple(deps)) for eqn, deps in sites}
    if len(selected) < len(closed.jaxpr.outvars):
        # a call reaching only the outputs not claimed about (--output) gets their cotangent, 0,
        # from jax.vjp all the same: its rule must map 0 to 0 (red team RT4-A: a bwd ``g + 1``
        # there added 1 to JAX's derivative of a claimed output)
        more = []
        _reached(closed, [s_.kind == "real" for s_, _ in ob.args], [True] * len(closed.jaxpr.outvars), more)
        sites += [(eqn, deps) for eqn, deps in more if (id(eqn), tuple(deps)) not in claimed]
    done = set()
    for eqn, deps in sites:
        if (id(eqn), tuple(deps)) in done:
            continue        # one jaxpr shared by two calls (JAX reuses a jitted function's): one claim
        done.add((id(eqn), tuple(deps)))
        fun, rule, where = _describe(eqn)
        what = f"{fun}, called at {where} ({rule}; operands {', '.join(f'a{k}' for k in range(len(eqn.invars)))})"
        diff = [k for k, d in enumerate(deps) if d]
        if not diff or not any(_inexact(v.aval) for v in eqn.outvars):
            continue        # not differentiated: no real operand depends on a differentiated argument
        zero = (id(eqn), tuple(deps)) not in claimed
        if zero:
            what += " (it reaches only outputs not claimed about: its rule's VJP at a zero cotangent is 0)"
        patterns = _patterns(eqn, diff)
        if patterns is None:
            verdicts.append(InnerRule(what, "UNKNOWN", why=f"its rule takes symbolic zeros, and {len(diff)} "
                                      "operands are too many to prove it for each set JAX may differentiate"))
            continue
        status, axioms, conds, why = "PROVED", set(), [], ""
        for pattern in patterns:
            got, ax, cs, w = _one(ob, eqn, pattern, fun, decide, failing, run, progress, minimum, zero)
            axioms |= set(ax)
            conds += [c for c in cs if c not in conds]
            if got != "PROVED":
                some = "" if pattern == diff else \
                    f"differentiating only {', '.join(f'a{k}' for k in pattern)} (its rule takes symbolic zeros): "
                status, why = got, some + w
                break
        verdicts.append(InnerRule(what, status, sorted(axioms), conds, why))
    return verdicts
