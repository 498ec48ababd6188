"""The import at symbolic sizes against the import at a concrete size, in the kernel
(untrusted driver; the kernel proves each equation).

The claims are proved about the function as JAX traces it at symbolic sizes, while JAX
runs it at concrete ones. Translation validation compares the two numerically at sampled
sizes and inputs, so a difference only at values no draw reaches slipped through: code
that takes another path at concrete shapes (``isinstance(d, int)``, a library's fast path
for static shapes) and differs there beyond 1e5, say (red team RT-49, helper-17).

So the functions are imported once more at one concrete size assignment, every size its
own value (2, 3, 4, ... above its lower bound, so a swapped pair of sizes shows), and the
kernel must prove each imported tensor of that import (the primal outputs with their
``stop_gradient`` values, the fwd rule's outputs, each cotangent) equal to the symbolic
import's with the sizes substituted, for every input value. What is left to sampling is
the sizes themselves: code that tells one concrete size from another (beyond a Python
comparison at symbolic sizes, which is refused) is outside what this sees.

An equation in the kernel is about the terms, read totally (``0 * log u = 0``) and with
the importer's assumptions; what JAX runs at the concrete size is also bound by neither.
So (red team RT4-A) the concrete import must also make no assumption the symbolic one
does not (a ``reduce_precision`` read as the identity), be shown finite where the
symbolic one is (its finiteness indicators proved equal; ``0 * log(1e8 - x*x)`` is NaN
far out), and call the same inner custom rules; the rules it calls are proved again at
the concrete size by certify (``api._decide``), since JAX runs a rule's Python at that
size too and the importer reads each call by its body.
"""
from __future__ import annotations

from verigrad.kernel import Failure, KernelError, Theorem, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly


def assignment(ob) -> dict:
    """``{SizeSym: int}``: the sizes of ``ob``'s arguments, each its own value."""
    syms = sorted({s for _, v in ob.args for d in v.shape for s in d.symbols()}, key=lambda s: s.name)
    out, low = {}, 2
    for s in syms:
        out[s] = max(s.lower, low)
        low = out[s] + 1
    return out


def _pairs(ob, other, sizes: dict):
    """``(what, symbolic term at the sizes, concrete term)`` for each imported tensor."""
    at = {s: Poly.const(v) for s, v in sizes.items()}

    def sub(t):
        return T.subst(t, at) if at else t
    raw, raw2 = ob.primal_raw or [], other.primal_raw or []
    for k in ob.selected():
        a = raw[k] if k < len(raw) and raw[k] is not None else ob.primal[k].term()
        b = raw2[k] if k < len(raw2) and raw2[k] is not None else other.primal[k].term()
        yield f"output {k}", sub(a), b
        if ob.fwd_out is not None:
            yield f"the fwd rule's output {k}", sub(ob.fwd_out[k].term()), other.fwd_out[k].term()
    # the finiteness indicators of risky cotangents (RT4-A: the total reading erases a NaN)
    risky, risky2 = getattr(ob, "risky", {}), getattr(other, "risky", {})
    for a in sorted(set(risky) & set(risky2)):
        yield f"where the cotangent of {a} is finite", sub(risky[a][0].term()), risky2[a][0].term()
    rf, rf2 = getattr(ob, "risky_forward", {}), getattr(other, "risky_forward", {})
    for k in sorted(set(rf) & set(rf2)):
        yield f"where the fwd rule's output {k} is finite", sub(rf[k][0].term()), rf2[k][0].term()
    for (v, t), (v2, t2) in zip(ob.stopped, other.stopped):
        yield f"the stop_gradient value {v.name}", sub(v), v2
        yield f"the value of {v.name}", sub(t), t2
    for a in ob.diff:
        yield f"the cotangent of {a}", sub(ob.got(a)), other.got(a)


def _sizes_out(text: str, sizes: dict) -> str:
    """An assumption's text at the concrete sizes: each size's name replaced by its value
    (``[0, k)`` at symbolic sizes is ``[0, 2)`` at k=2) and the x64 note dropped (an index is
    int64 at symbolic sizes, int32 at concrete ones): the same assumption reads the same."""
    import re
    text = text.replace("; JAX's integers are 32-bit with x64 off", "")
    values = {s.name: str(v) for s, v in sizes.items()}
    if values:
        text = re.sub(r"\b(?:" + "|".join(map(re.escape, values)) + r")\b", lambda m: values[m.group(0)], text)
    return text


def check(ob, budget=None) -> str | None:
    """None when the import at ``assignment(ob)`` is, by the kernel, the symbolic import at
    those sizes; else why not (the claim is then not made)."""
    import jax
    rebuild = getattr(ob, "rebuild", None)
    if rebuild is None or getattr(ob, "symbolic_closure", False) or getattr(ob, "given_structs", False):
        return None       # built inside a symbolic scope: it has no concrete trace of its own
    sizes = assignment(ob)
    where = ", ".join(f"{s.name}={v}" for s, v in sizes.items()) or "its only size"
    at = {s: Poly.const(v) for s, v in sizes.items()}
    structs = [jax.ShapeDtypeStruct(tuple(int(d.subst(at).const_value()) for d in v.shape), st.dtype)
               for (_, v), st in zip(ob.args, ob.structs)]
    try:
        other = rebuild(structs, sizes)
    except Exception as e:  # noqa: BLE001 - the function does not trace or import at this size
        first = str(e).strip().splitlines()
        return f"at {where} the function does not import as at symbolic sizes ({type(e).__name__}: " \
               f"{first[0] if first else ''})"
    if len(other.stopped) != len(ob.stopped) or other.diff != ob.diff or len(other.primal) != len(ob.primal) \
            or (other.fwd_out is None) != (ob.fwd_out is None):
        return f"at {where} JAX traces the function to another structure than at symbolic sizes"
    ob.exact_import, ob.exact_where = other, where      # certify proves its inner custom rules too
    if list(getattr(other, "custom_rules", [])) != list(getattr(ob, "custom_rules", [])):
        return (f"at {where} the function calls other custom rules than at symbolic sizes "
                f"({', '.join(other.custom_rules) or 'none'}, not {', '.join(ob.custom_rules) or 'none'}): "
                "the function takes another path at concrete shapes")
    # an assumption only the concrete import makes is one the certificate would not state (a size
    # limit is about sizes: at the small sizes here it holds where the symbolic import's does)
    stated = {_sizes_out(a, sizes) for a in ob.assumptions}
    extra = [a for a in other.assumptions if "for sizes up to" not in a and _sizes_out(a, {}) not in stated]
    if extra:
        return (f"at {where} the import assumes what it does not at symbolic sizes ({extra[0]}): "
                "the function takes another path at concrete shapes")
    more_f = sorted(set(getattr(other, "risky_forward", {})) - set(getattr(ob, "risky_forward", {})))
    if more_f:
        return (f"at {where} the fwd rule's output {more_f[0]} may be non-finite "
                f"({other.risky_forward[more_f[0]][2]}), and not at symbolic sizes: the function takes another "
                "path at concrete shapes")
    more = sorted(set(getattr(other, "risky", {})) - set(getattr(ob, "risky", {})))
    if more:
        return (f"at {where} the cotangent of {more[0]} may be non-finite ({other.risky[more[0]][1]}), and not at "
                "symbolic sizes: the function takes another path at concrete shapes")
    for what, a, b in _pairs(ob, other, sizes):
        if a.shape != b.shape:
            return f"at {where}, {what} has another shape than at symbolic sizes"
        try:
            th = prove_equal(b, a, budget=budget)
        except KernelError as e:
            th = Failure(str(e))
        if not isinstance(th, Theorem) or th.conds:
            why = str(th) if not isinstance(th, Theorem) else "only under side conditions"
            return (f"at {where}, {what} as JAX traces it there is not proved to be the one traced at symbolic "
                    f"sizes ({why}): the function takes another path at concrete shapes")
    return None
