"""The importer's rule for ``scan`` (untrusted): a loop of concrete length, unrolled.

``lax.scan(f, init, xs, length=L, reverse=r)`` traces to one ``scan`` equation whose
operands are ``num_consts`` constants, ``num_carry`` carries and the scanned ``xs``, and
whose body jaxpr maps ``(consts, carry, x) -> (carry', y)``. At a concrete length ``L``
it is exactly the unrolled loop

    c_0 = init;   c_{s+1}, y_{k_s} = f(consts, c_s, xs[k_s])   for s = 0 .. L-1,
    k_s = s (``reverse``: L-1-s);   out = (c_L, stack_k y_k along a new axis 0),

and that is what the rule builds: the body jaxpr is interpreted ``L`` times by the same
importer (its values keep their facts: where they may be NaN or infinite, their sign),
``xs[k]`` is the slice at the constant index ``k`` of axis 0, and entry ``[i, ..]`` of a
stacked output is ``y_k[..]`` at a constant ``i = k``, else ``sum_k [i == k] y_k[..]``.
``unroll`` changes how XLA compiles the loop, not its value, and is ignored.
``fori_loop`` with Python-integer bounds traces to such a scan (its counter is an integer
carry, an index expression after unrolling); a loop whose trip count is not known when
it is traced is a ``while``, which stays unsupported.

Refused, with the scan's source line:

- a symbolic length (the scanned axis has a size symbol such as ``n``): the claim would
  be for every ``n``, and a loop of unknown length cannot be unrolled. The message names
  the size and the arguments it is a size of, and how to fix it in ``--shape``; the
  certificate is then about that size only.
- more than ``MAX_STEPS`` iterations, or more than ``MAX_EQUATIONS`` equations unrolled
  (nested scans multiply): the terms would be too large for the kernel to decide.
"""
from __future__ import annotations

import re

import numpy as np

from verigrad.kernel import Num
from verigrad.kernel.sizes import Poly

from . import jaxpr_exact, jaxpr_scalar as S
from .jaxpr_core import JaxprImportError, Tensor, kind_of, where_of
from .jaxpr_owners import SYMBOL_OWNERS, symbols_of
from .jaxpr_rules import rule, structural

MAX_STEPS = 256            # iterations of one scan
MAX_EQUATIONS = 20000      # equations of the unrolled loop, nested loops and calls counted in full


def _body_cost(jaxpr) -> int:
    """The number of equations interpreting ``jaxpr`` once takes (scans unrolled, calls inlined)."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        p = eqn.params
        if eqn.primitive.name == "scan":
            n = p["length"]
            total += (int(n) if isinstance(n, (int, np.integer)) else 1) * _body_cost(p["jaxpr"])
            continue
        for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
            sub = p.get(key)
            if sub is not None and hasattr(getattr(sub, "jaxpr", sub), "eqns"):
                total += _body_cost(sub)
                break
    return total


def _folded(dim: str) -> str:
    """A dimension written with numbers only (``4+1``) as its value (``5``)."""
    if re.fullmatch(r"[0-9+*()-]+", dim.replace(" ", "")):
        try:
            return str(int(eval(dim, {"__builtins__": {}})))  # noqa: S307 - digits and + - * ( ) only
        except Exception:  # noqa: BLE001 - left as written
            return dim
    return dim


def _symbolic_length(length) -> str:
    """The refusal for a scan of symbolic length: which size, whose, and how to fix it."""
    syms = symbols_of(length)
    entry = SYMBOL_OWNERS.get(id(getattr(length, "scope", None)))
    if entry is None or entry[0] is not getattr(length, "scope", None):
        entry = (None, {}, {})
    owners, dims = entry[1], (entry[2] if len(entry) > 2 else {})
    args = []
    for s in syms:
        for a in owners.get(s, ()):
            if a not in args:
                args.append(a)
    size = ", ".join(syms) or str(length)
    whose = f" (a size of {', '.join(args)})" if args else ""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, syms)) + r")\b") if syms else None
    shapes = []
    for a in args:
        if a not in dims or pattern is None:
            continue
        fixed = [pattern.sub("4", d) for d in dims[a]]
        fixed = [_folded(d) for d in fixed]
        shapes.append(f"--shape {a}={','.join(fixed)}")
    example = f" (e.g. {' '.join(shapes)})" if shapes else ""
    those = "those sizes" if len(syms) > 1 else "that size"
    return (f"its length {length} is symbolic{whose}; a scan is unrolled only at a concrete length: give a "
            f"concrete size for {size} in --shape{example}, and the claim is then about {those}")


def _row(ctx, eqn, x: Tensor, k: int) -> Tensor:
    """``x[k]``: the slice at constant index ``k`` of axis 0 (facts follow ``x``)."""
    def take(ctx, eqn, x):
        return Tensor(x.shape[1:], lambda idx: x.at((Poly.const(k),) + tuple(idx)), x.kind, const=x.const)
    return jaxpr_exact.apply(ctx, eqn, structural()(take), [x], role="smooth")     # twins follow (RT-36)


def _warm(chain, idx):
    """Read ``idx`` of each tensor of ``chain`` (the same value after successive steps),
    first to last. An entry of step ``s`` reads step ``s - 1``'s, so reading the last step
    alone recurses through every step (Python's stack ends near a thousand frames); read
    in order, each step finds the one before it memoized. A read that fails is left to
    fail where the entry is really needed (it may never be)."""
    from verigrad.kernel import KernelError
    for t in chain:
        try:
            t.at(idx)
        except (JaxprImportError, KernelError):
            return


def _carried(ctx, eqn, chain: list) -> Tensor:
    """A final carry, ``chain[-1]``, its entries read after the earlier steps' (``_warm``)."""
    if len(chain) < 3:
        return chain[-1]

    def last(ctx, eqn, *chain):
        def entry(idx):
            _warm(chain[:-1], tuple(idx))
            return chain[-1].at(tuple(idx))
        return Tensor(chain[-1].shape, entry, chain[-1].kind, const=chain[-1].const)
    # facts: the last step's only (``structural`` joins them over its data operands)
    return jaxpr_exact.apply(ctx, eqn, structural(lambda n: (n - 1,))(last), chain, role="smooth")


def _stacked(ctx, eqn, ys: list, order: list, m: int) -> Tensor:
    """Output ``m`` of the stacked ys: entry ``[i, ..]`` is ``ys[i][..]`` (facts join the
    ys'); ``order`` lists the positions in the order the steps made them."""
    aval = eqn.outvars[m].aval
    shape = ctx.shape(aval)
    kind = kind_of(aval.dtype)
    if not ys:
        return Tensor(shape, lambda idx: Num(0), kind)     # length 0: no entries

    def stack(ctx, eqn, *ys):
        consts = {y.const for y in ys}
        const = consts.pop() if len(consts) == 1 and None not in consts else None

        def entry(idx):
            i, rest = idx[0], tuple(idx[1:])
            if i.is_const():
                k = i.const_value()
                _warm([ys[q] for q in order[:order.index(k)]], rest)
                return ys[k].at(rest)
            _warm([ys[q] for q in order], rest)
            out = Num(0)
            for k, y in enumerate(ys):
                out = S.add(out, S.mul(S.int_compare(i, Poly.const(k), "=="), y.at(rest)))
            return out
        return Tensor(shape, entry, kind, const=const)
    return jaxpr_exact.apply(ctx, eqn, structural()(stack), ys, role="smooth")


@rule("scan")
def _scan(ctx, eqn, *ins):
    """A scan of concrete length, unrolled (module docstring)."""
    p = eqn.params
    length = p["length"]
    if not isinstance(length, (int, np.integer)):
        raise JaxprImportError(_symbolic_length(length))
    length = int(length)
    if length > MAX_STEPS:
        raise JaxprImportError(f"a scan of {length} iterations is not unrolled (at most {MAX_STEPS}); "
                               "give the scanned axis a smaller size")
    body = p["jaxpr"]
    cost = length * _body_cost(body)
    if cost > MAX_EQUATIONS:
        raise JaxprImportError(f"unrolling this scan ({length} iterations) gives {cost} equations, more than "
                               f"{MAX_EQUATIONS}; give the scanned axes smaller sizes")
    nc, nk = p["num_consts"], p["num_carry"]
    consts, carry, xs = list(ins[:nc]), list(ins[nc:nc + nk]), list(ins[nc + nk:])
    ny = len(eqn.outvars) - nk
    ys: dict = {}
    order = list(range(length - 1, -1, -1) if p.get("reverse") else range(length))
    chains = [[c] for c in carry]
    for k in order:
        rows = [_row(ctx, eqn, x, k) for x in xs]
        try:
            outs = ctx.run(body, consts + carry + rows)
        except JaxprImportError as e:
            if " at : " in str(e):      # a body traced inside JAX has no user line: the scan's
                raise JaxprImportError(str(e).replace(" at : ", f" at {where_of(eqn)}: ", 1),
                                       located=True) from None
            raise
        carry, ys[k] = list(outs[:nk]), list(outs[nk:])
        for chain, c in zip(chains, carry):
            chain.append(c)
    return ([_carried(ctx, eqn, chain) for chain in chains]
            + [_stacked(ctx, eqn, [ys[k][m] for k in range(length)], order, nk + m) for m in range(ny)])
