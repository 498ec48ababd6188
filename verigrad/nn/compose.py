r"""Certificates by construction (untrusted driver; every step is a kernel rule).

A layer built with the combinators is a tree: zoo layers at the leaves, ``chain``,
``fan_in``, ``residual``, ``site_residual`` and ``named`` at the nodes. ``certify``
walks it:

- a **leaf** is imported at symbolic sizes (the jaxpr importer, checked against JAX by
  translation validation) and the kernel proves, for its input and every parameter v,
  ``|- B_v = vjp_statement(F, v, dy)``;
- a **node** instantiates a composition rule (``verigrad.nn.rules``, proved once over
  opaque branches) with its children as the branches. The rule's declared VJPs become
  ``At(vjp_statement(F_c, v_c, dy_c), ...)``: the child's VJP statement at a point,
  which ``rewrite`` replaces by the child's certified backward (the child's theorem,
  used under ``At``) and ``at_elim`` evaluates at the point.

Every step is ``instantiate``, ``rewrite``, ``at_elim``, ``symm`` or ``trans``: nothing
re-normalizes the whole network, and the network's theorems rest on the leaves'
theorems and the rules' theorems. The composed backward is a term the kernel built, not
a function the driver wrote.

The leaves' side conditions (off a relu's kink, off a max pool's ties) come along, composed
with what the layers before compute; a network is certified only where each is shown to
fail on a null set of its inputs (``verigrad.nn.almost_everywhere``, red team RT15).
"""
from __future__ import annotations

import contextlib
import gc
import time
from dataclasses import dataclass, field

from verigrad.kernel import (At, FnLam, KernelError, Lamda, Term, Theorem, Var, at_elim, instantiate, prove_equal,
                             rewrite, symm, trans)
from verigrad.kernel import terms as T
from verigrad.kernel.theorem import Failure
from verigrad.nn.combinators import made_here
from verigrad.nn.layers.core import Layer
from . import rules as R
from verigrad.errors import VerigradError

COMBINATORS = ("chain", "fan_in", "residual", "site_residual")


@dataclass
class Certified:
    """A layer with kernel theorems ``|- backward_v = vjp_statement(forward, v, dy)`` for
    its input and each parameter v (a ``Failure`` where a part was not proved)."""
    path: str
    layer: Layer
    x: Var
    dy: Var
    forward: Term
    params: dict                       # parameter name -> Var
    aux: dict                          # auxiliary input name -> Var
    theorems: dict                     # variable name -> Theorem | Failure
    leaves: list = field(default_factory=list)    # (path, layer name, {var: status}, seconds)
    rules: list = field(default_factory=list)     # names of the rules applied
    seconds: float = 0.0
    # why a side condition of the composed theorems is not shown to fail only on a null set
    # of the inputs (``verigrad.nn.almost_everywhere``); None when each is, or not asked
    unshown: str | None = None

    @property
    def variables(self) -> list:
        return [self.x] + list(self.params.values())

    @property
    def proved(self) -> bool:
        return self.unshown is None and all(isinstance(t, Theorem) for t in self.theorems.values())


class CompositionError(VerigradError):
    pass


def certify(layer: Layer, path: str = "net", keep: dict | None = None, conditions: bool = True) -> Certified:
    """Certificates for every parameter and the input of ``layer`` (built at symbolic
    sizes), by construction from its leaves. The cyclic garbage collector is paused
    meanwhile, as the kernel's rules pause it: each collection would rescan the growing
    tables of hash-consed terms (about a fifth of a ViT's certification). ``keep``
    (``{id(node): None}``) receives ``(path, Certified)`` of each of those nodes made on
    the way (``builder.Model`` keeps its ``Custom`` pieces' from the network's own run).
    With ``conditions``, the composed theorems' side conditions are asked to fail only on
    a null set of the inputs (``almost_everywhere``; else ``unshown`` says why not, and the
    result is not ``proved``)."""
    t0 = time.perf_counter()
    with gc_paused():
        out = _certify(layer, path, keep)
        if conditions and all(isinstance(t, Theorem) for t in out.theorems.values()):
            from verigrad.nn.almost_everywhere import unshown
            out.unshown = unshown(list(out.theorems.values()), discrete=list(out.aux.values()))
    out.seconds = time.perf_counter() - t0
    return out


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector paused for the block, and what the block made frozen
    (``gc.freeze``) after it: terms make no reference cycles and live as long as the
    process (they are hash-consed), yet once a network is certified each collection would
    rescan its millions of terms (1.5 to 2 CPU seconds of a ViT block's 6.5). The cost:
    reference cycles that became garbage inside the block are never collected (memory
    grows by a few percent per certification; measured: 4 ViT blocks, 1.35 GB against
    1.25 GB)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def kind_of(layer: Layer) -> str:
    """How a layer is certified: by a combinator's composition rule ("chain", "fan_in",
    "residual", "site_residual"), as a renamed layer ("named"), or as a "leaf" from its own
    functions. Only a node a combinator made counts as one (``made_here``), whatever its name."""
    if not made_here(layer):
        return "leaf"
    return layer.name if layer.name in COMBINATORS else "named" if _is_named(layer) else "leaf"


def _certify(layer: Layer, path: str, keep: dict | None = None) -> Certified:
    out = _certify_node(layer, path, keep)
    if keep is not None and id(layer) in keep:
        keep[id(layer)] = (path, out)
    return out


def _certify_node(layer: Layer, path: str, keep: dict | None) -> Certified:
    kind = kind_of(layer)
    if kind == "leaf" or (kind == "named" and _leafish(layer.children[0])):
        return _leaf(layer, path)
    if kind == "named":
        return _renamed(_certify(layer.children[0], path, keep), layer)
    kids = [_certify(c, f"{path}.{i}", keep) for i, c in enumerate(layer.children)]
    if kind == "chain":
        out = kids[0]
        for k in kids[1:]:
            out = _chain(out, k, layer)
        return out
    if kind == "fan_in":
        out = kids[0]
        for k in kids[1:]:
            out = _fan_in(out, k, layer)
        return out
    site = _site(layer, kids[0]) if kind == "site_residual" else None
    return _residual(kids[0], layer, site)


def _is_named(layer: Layer) -> bool:
    return len(layer.children) == 1 and layer.hyper.get("layer") == layer.children[0].name


def _leafish(layer: Layer) -> bool:
    return kind_of(layer) == "leaf"


# -- leaves ------------------------------------------------------------------------------------

def certify_leaf(layer: Layer, path: str, rebuild=None) -> Certified:
    """One layer as a leaf. ``rebuild(sizes) -> Layer`` (optional) builds it at concrete
    sizes ({SizeSym name: int}) for translation validation, when the layer closes over
    symbolic dimensions that JAX cannot solve from the argument shapes (``H * e``)."""
    return _leaf(layer, path, rebuild)


def _leaf(layer: Layer, path: str, rebuild=None) -> Certified:
    """Import a leaf and prove its VJP claims. Imported under local names (``x``, the
    layer's own parameter names, ``dy``), identical leaves (the blocks of a ViT) give
    identical terms: each is proved once, and renamed to its place by ``instantiate``."""
    from verigrad.certify.obligations import build
    from verigrad.certify.validate import validate
    from verigrad.frontends.jaxpr import ArgSpec
    t0 = time.perf_counter()
    pnames, anames = list(layer.param_names), list(layer.aux_names)
    local = ["x"] + [f"p{i}" for i in range(len(pnames))] + [f"a{i}" for i in range(len(anames))]
    shapes = [layer.x] + [p.shape for p in layer.params] + [a.shape for a in layer.aux]
    specs = {n: ArgSpec(n, tuple(str(d) for d in sh)) for n, sh in zip(local, shapes)}
    k = 1 + len(pnames)

    def forward(*args):
        return layer.forward(dict(zip(pnames, args[1:k])), args[0], *args[k:])

    def backward(args, res, ct):
        dx, grads = layer.backward(dict(zip(pnames, args[1:k])), args[0], *args[k:], ct)
        return (dx,) + tuple(grads[p] for p in pnames)

    import jax
    import jax.numpy as jnp
    structs = [jax.ShapeDtypeStruct(tuple(sh), jnp.float64) for sh in shapes]   # the layer's own symbolic scope
    ob = build(f"{layer.name}@{path}", forward, None, backward, local, specs, nondiff=tuple(range(k, len(local))),
               structs=structs)
    ob.symbolic_closure = True       # built at symbolic sizes: validate through jax.export
    if rebuild is not None:
        ob.at_sizes = lambda sizes: _functions(rebuild({s.name: v for s, v in sizes.items()}))
    F = ob.primal[0].term()
    key = (F, tuple(ob.got(n) for n in local[:k]))
    seen = key in _PROVED
    # A leaf whose traced functions are those of one already validated computes the same
    # thing (its parameters are positional, so blocks of a ViT trace alike).
    jaxprs = _jaxpr_key(ob)
    problem = None if jaxprs in _VALIDATED else validate(ob, seeds=(0,) if seen else (0, 1))
    if problem is None:
        _VALIDATED.add(jaxprs)
    if problem:
        proofs = {n: Failure(f"translation validation failed: {problem}") for n in local[:k]}
    else:
        if not seen:
            _PROVED[key] = {n: _generic(ob, prove_equal(ob.got(n), ob.expected(n))) for n in local[:k]}
        proofs = _PROVED[key]
    # Rename to the network's variables: x@path, the parameters' names, dy@path.
    x, dy = Var(f"x@{path}", ob.var("x").shape), Var(f"dy@{path}", ob.cots[0].shape)
    names = dict(zip(local, [x.name] + pnames + anames))
    mapping = {ob.var(n): Var(names[n], ob.var(n).shape) for n in local}
    mapping[ob.cots[0]] = dy
    theorems = {names[n]: instantiate(th, mapping) if isinstance(th, Theorem) else th for n, th in proofs.items()}
    statuses = {n: "PROVED" if isinstance(t, Theorem) else "UNKNOWN" for n, t in theorems.items()}
    return Certified(path, layer, mapping[ob.var("x")], dy, T.subst(F, mapping),
                     {p: mapping[ob.var(f"p{i}")] for i, p in enumerate(pnames)},
                     {a: mapping[ob.var(f"a{i}")] for i, a in enumerate(anames)},
                     theorems, [(path, layer.name, statuses, time.perf_counter() - t0)])


def _generic(ob, th):
    """``th``, unless it holds only under a side condition that fails on a set of positive
    measure (at random inputs): then a Failure saying so."""
    if isinstance(th, Theorem) and th.conds:
        from verigrad.certify.api import _failing_condition
        bad = _failing_condition(ob, th)
        if bad:
            return Failure(f"proved only under a condition: {bad}")
    return th


def _functions(layer: Layer):
    """(primal, combined) of ``layer`` in the calling convention of ``_leaf``."""
    pnames = list(layer.param_names)
    k = 1 + len(pnames)

    def primal(*args):
        return layer.forward(dict(zip(pnames, args[1:k])), args[0], *args[k:])

    def combined(*args):
        *prim, dy = args
        dx, grads = layer.backward(dict(zip(pnames, prim[1:k])), prim[0], *prim[k:], dy)
        return [dx] + [grads[p] for p in pnames]
    return primal, combined


_PROVED: dict = {}        # (forward, backwards) -> {local name: Theorem | Failure}
_VALIDATED: set = set()   # keys (``_jaxpr_key``) of the jaxprs whose import passed translation validation


def _jaxpr_key(ob) -> tuple:
    """What the import of ``ob`` read: the texts of the closed jaxprs it traced (its
    primal's, its fwd and bwd's), with the values of their constants, which a jaxpr's text
    names but does not print (two layers alike but for a closed-over array must both be
    validated). The jaxprs are those ``build`` traced and imported, not traced again."""
    return tuple((str(c), _const_values(c)) for c in ob.jaxprs)


def _const_values(closed) -> tuple:
    """The constants of a closed jaxpr and of the closed jaxprs in its equations'
    parameters, as (dtype, shape, bytes)."""
    import numpy as np
    out = []
    for c in getattr(closed, "consts", ()):
        a = np.asarray(c)
        out.append((a.dtype.str, a.shape, a.tobytes()))
    for eqn in getattr(closed, "jaxpr", closed).eqns:
        for p in eqn.params.values():
            for q in (p if isinstance(p, (tuple, list)) else (p,)):
                if hasattr(q, "eqns") or (hasattr(q, "jaxpr") and hasattr(q, "consts")):
                    out.append(_const_values(q))
    return tuple(out)


# -- the rules at work -------------------------------------------------------------------------

def _by_rule(rule: R.Rule, mapping: dict, children) -> Theorem | Failure:
    """Instantiate ``rule`` and replace each declared VJP by the child's certified
    backward: ``rewrite`` with the child's theorem under ``At``, then ``at_elim``."""
    for c in children:
        if not isinstance(c, Theorem):
            return Failure(f"a part is not proved: {c}")
    th = instantiate(rule.theorem, mapping)
    for c in children:
        r = rewrite(symm(c), th.lhs)
        th = trans(symm(r), th)
    return trans(symm(at_elim(th.lhs)), th)


def _sizes(rule: R.Rule, **shapes) -> dict:
    out = {}
    for role, actual in shapes.items():
        out.update(zip(rule.shapes[role], actual))
    return out


def _union(*dicts) -> dict:
    out = {}
    for d in dicts:
        clash = set(out) & set(d)
        if clash:
            raise CompositionError(f"a parameter or site occurs in two branches: {', '.join(sorted(clash))}")
        out.update(d)
    return out


def _node(kind, layer, x, dy, forward, params, aux, theorems, kids, rules) -> Certified:
    return Certified(kind, layer, x, dy, forward, params, aux, theorems,
                     [leaf for k in kids for leaf in k.leaves], sorted({r for k in kids for r in k.rules} | set(rules)))


def _chain(f: Certified, g: Certified, layer: Layer) -> Certified:
    """``g(f(x))``: the chain rule for the input and f's parameters; g's parameters see
    ``f(x)`` as a constant first argument (the outer-parameter rule)."""
    F, G = f.forward, g.forward
    theorems = {}
    for v in f.variables:
        rule = R.chain(len(v.shape), len(g.x.shape), len(g.dy.shape))
        m = _sizes(rule, x=v.shape, y=g.x.shape, z=g.dy.shape)
        fn, gn = rule.fns["f"], rule.fns["g"]
        m.update({fn: FnLam([v], F, cot=f.dy), gn: FnLam([g.x], G, cot=g.dy), rule.variables["x"]: v,
                  rule.variables["dy"]: g.dy})
        theorems[v.name] = _by_rule(rule, m, [f.theorems[v.name], g.theorems[g.x.name]])
    for th_name, v in g.params.items():
        rule = R.outer_parameter(len(g.x.shape), len(v.shape), len(g.dy.shape))
        m = _sizes(rule, y=g.x.shape, x=v.shape, z=g.dy.shape)
        m.update({rule.fns["g"]: FnLam([g.x, v], G, cot=g.dy), rule.variables["u"]: F, rule.variables["x"]: v,
                  rule.variables["dy"]: g.dy})
        theorems[v.name] = _by_rule(rule, m, [g.theorems[v.name]])
    forward = T.subst(G, {g.x: F})
    return _node("chain", layer, f.x, g.dy, forward, _union(f.params, g.params), _union(f.aux, g.aux),
                 theorems, [f, g], ["chain", "outer parameter"] if g.params else ["chain"])


def _with_input(c: Certified, x: Var) -> Certified:
    """``c`` reading ``x`` instead of its own input variable (both branches of a fan-in
    read the same input)."""
    if c.x is x:
        return c
    ths = {(x.name if n == c.x.name else n): (instantiate(t, {c.x: x}) if isinstance(t, Theorem) else t)
           for n, t in c.theorems.items()}
    return Certified(c.path, c.layer, x, c.dy, T.subst(c.forward, {c.x: x}), c.params, c.aux, ths, c.leaves,
                     c.rules)


def _fan_in(f: Certified, g: Certified, layer: Layer) -> Certified:
    """``f(x) + g(x)``: the branches' cotangents add up; a parameter of one branch sees
    the other as a constant summand (the offset rule)."""
    g = _with_input(g, f.x)
    if g.dy is not f.dy:
        g = _with_cotangent(g, f.dy)
    F, G = f.forward, g.forward
    x = f.x
    theorems = {}
    rule = R.fan_in(len(x.shape), len(f.dy.shape))
    m = _sizes(rule, x=x.shape, y=f.dy.shape)
    m.update({rule.fns["f"]: FnLam([x], F, cot=f.dy), rule.fns["g"]: FnLam([x], G, cot=f.dy),
              rule.variables["x"]: x, rule.variables["dy"]: f.dy})
    theorems[x.name] = _by_rule(rule, m, [f.theorems[x.name], g.theorems[x.name]])
    for side, branch, other in (("right", f, G), ("left", g, F)):
        for v in branch.params.values():
            rule = R.offset(len(v.shape), len(f.dy.shape), side)
            mm = _sizes(rule, x=v.shape, y=f.dy.shape)
            mm.update({rule.fns["f"]: FnLam([v], branch.forward, cot=f.dy), rule.variables["c"]: other,
                       rule.variables["x"]: v, rule.variables["dy"]: f.dy})
            theorems[v.name] = _by_rule(rule, mm, [branch.theorems[v.name]])
    forward = T.subst(R.fan_in(len(x.shape), len(f.dy.shape)).forward, {**m})
    return _node("fan_in", layer, x, f.dy, forward, _union(f.params, g.params), _union(f.aux, g.aux),
                 theorems, [f, g], ["fan-in", "offset"])


def _with_cotangent(c: Certified, dy: Var) -> Certified:
    ths = {n: (instantiate(t, {c.dy: dy}) if isinstance(t, Theorem) else t) for n, t in c.theorems.items()}
    return Certified(c.path, c.layer, c.x, dy, c.forward, c.params, c.aux, ths, c.leaves, c.rules)


def _site(layer: Layer, branch: Certified):
    name = layer.hyper.get("site", "s")
    shape = branch.x.shape[:1]
    return Var(name, shape)


def _residual(f: Certified, layer: Layer, s: Var | None) -> Certified:
    """``x + f(x)`` or, with a drop-path site s, ``x + s[b] f(x)``; a parameter of the
    branch sees the skip as a constant summand."""
    x, rank = f.x, len(f.x.shape)
    rule = R.site_residual(rank) if s is not None else R.residual(rank)
    m = _sizes(rule, x=x.shape)
    m.update({rule.fns["f"]: FnLam([x], f.forward, cot=f.dy), rule.variables["x"]: x, rule.variables["dy"]: f.dy})
    if s is not None:
        m[rule.variables["s"]] = s
    theorems = {x.name: _by_rule(rule, m, [f.theorems[x.name]])}
    for v in f.params.values():
        orule = R.offset(len(v.shape), rank, "left", site=s is not None)
        mm = _sizes(orule, x=v.shape, y=x.shape)
        mm.update({orule.fns["f"]: FnLam([v], f.forward, cot=f.dy), orule.variables["c"]: x,
                   orule.variables["x"]: v, orule.variables["dy"]: f.dy})
        if s is not None:
            mm[orule.variables["s"]] = s
        theorems[v.name] = _by_rule(orule, mm, [f.theorems[v.name]])
    forward = T.subst(rule.forward, m)
    aux = _union({s.name: s} if s is not None else {}, f.aux)
    return _node(layer.name, layer, x, f.dy, forward, f.params, aux, theorems, [f],
                 [rule.name, "offset" + (" with a site" if s is not None else "")])


def _renamed(c: Certified, layer: Layer) -> Certified:
    """``named(prefix, child)``: the child's parameters and sites renamed ``prefix/name``."""
    prefix = layer.name
    mp = {v: Var(f"{prefix}/{n}", v.shape, v.facts) for n, v in {**c.params, **c.aux}.items()}
    ths = {}
    for n, t in c.theorems.items():
        new = f"{prefix}/{n}" if n in c.params else n
        ths[new] = instantiate(t, mp) if isinstance(t, Theorem) else t
    return Certified(c.path, layer, c.x, c.dy, T.subst(c.forward, mp),
                     {f"{prefix}/{n}": mp[v] for n, v in c.params.items()},
                     {f"{prefix}/{n}": mp[v] for n, v in c.aux.items()}, ths, c.leaves, c.rules)


__all__ = ["Certified", "certify", "CompositionError"]
_ = (KernelError, Lamda)
