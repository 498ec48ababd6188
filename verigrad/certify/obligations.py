"""What a custom backward must satisfy, as kernel terms (untrusted).

For a ``jax.custom_vjp`` function ``f`` with rules ``fwd`` and ``bwd``:

(a) the primal output of ``fwd`` equals ``f``:           fwd(x)[0] = f(x)
(b) for every differentiable argument ``x_k``:            bwd(res(x), dy)_k = sum_j J_{f_j}(x)^T dy_j

where ``J_{f_j}(x)^T dy_j [K] = sum_I dy_j[I] d f_j(x)[I] / d x_k[K]``: one cotangent per
output, summed over the outputs. ``f`` is traced once; ``fwd`` and ``bwd`` are traced
together as the single function ``(x, dy) -> (fwd(x)[0], bwd(fwd(x)[1], dy))``, so the
residuals (Python numbers included) are ordinary intermediate values.

Integer and boolean arguments (labels, masks) get no cotangent and no claim (b); the
backward may return ``None`` or a zero (float0) cotangent for them. ``None`` for a real
argument means a zero cotangent, and is claimed as such.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from verigrad.frontends.jaxpr import (Importer, JaxprImportError, Tensor, argument_tensor, argument_var, import_session,
                                      kind_of, shape_polys, symbolic_structs, trace)
from verigrad.kernel import Lamda, Num, Term, Var, vjp_statement
from verigrad.kernel import IndexVar
from .inputs import Domain


class BadInput(JaxprImportError):
    """The function or the shapes given do not fit (reported as bad input, exit code 3)."""


@dataclass
class Obligations:
    """The imported claims of one custom backward, with what is needed to check them."""
    name: str
    args: list                  # [(ArgSpec, Var)]
    diff: list                  # names of the arguments claim (b) is made for
    cots: list                  # cotangent Vars, one per output
    primal: list                # Tensors: f's outputs
    fwd_out: list | None        # Tensors: fwd's primal outputs (None for certify_vjp)
    cotangents: dict            # argument name -> Tensor (bwd's cotangent) or None (zero)
    domain: Domain
    assumptions: list = field(default_factory=list)
    primal_fn: object = None    # the JAX functions, for translation validation
    combined_fn: object = None
    structs: list = field(default_factory=list)
    out_tree: object = None
    returned: list = field(default_factory=list)   # [(argument, Tensor)]: what bwd returned, in order

    def var(self, name: str) -> Var:
        return next(v for s, v in self.args if s.name == name)

    def expected(self, name: str) -> Term:
        """``sum_j J_{f_j}^T dy_j`` for argument ``name``."""
        x = self.var(name)
        parts = [vjp_statement(f.term(), x, dy) for f, dy in zip(self.primal, self.cots)]
        out = parts[0]
        for p in parts[1:]:
            out = out + p
        return out

    def got(self, name: str) -> Term:
        t = self.cotangents[name]
        if t is not None:
            return t.term()
        x = self.var(name)
        if not x.shape:
            return Num(0)
        return Lamda([IndexVar(f"k{j}", s) for j, s in enumerate(x.shape)], Num(0))


# -- reading the user's function --------------------------------------------------------

def positional_parameters(fn) -> list:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        raise BadInput(f"cannot read the signature of {fn!r}") from None
    out = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            out.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            raise BadInput(f"{getattr(fn, '__name__', fn)} takes *{p.name}: name its arguments")
    return out


def is_custom_vjp(fn) -> bool:
    return type(fn).__name__ == "custom_vjp" and hasattr(fn, "fun")


def _unique(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _flatten(tree):
    import jax
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: x is None)


def build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs: dict, nondiff=(), statics: dict | None = None,
          structs=None):
    """Trace and import. ``fwd_fn(*args) -> (out, res)`` (or None), ``bwd_fn(args, res, ct)``
    returns the cotangent of each argument not in ``nondiff`` (``None`` allowed).
    ``structs`` (optional, one ``jax.ShapeDtypeStruct`` per traced argument) are used
    instead of parsing the specs' dimensions: a function built at symbolic sizes must be
    traced in the symbolic scope it was built in."""
    with import_session():
        return _build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs, nondiff, statics, structs)


def _build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs, nondiff, statics, given_structs=None):
    import jax
    statics = dict(statics or {})
    missing = [p for p in param_names if p not in specs and p not in statics]
    extra = [k for k in list(specs) + list(statics) if k not in param_names]
    if missing or extra:
        raise BadInput(f"{name} takes ({', '.join(param_names)}); "
                       + (f"no shape given for {', '.join(missing)}" if missing else "")
                       + ("; " if missing and extra else "")
                       + (f"no argument named {', '.join(extra)}" if extra else ""))
    for k in statics:
        if param_names.index(k) not in nondiff:
            raise BadInput(f"argument {k} is given a value, not a shape: only nondiff_argnums may be static")
    traced = [p for p in param_names if p in specs]
    arg_specs = [specs[p] for p in traced]
    structs = list(given_structs) if given_structs is not None else symbolic_structs(arg_specs)

    def full(arrays):
        it = iter(arrays)
        return [statics[p] if p in statics else next(it) for p in param_names]

    # f, traced alone.
    closed_f, out_shape = trace(lambda *a: primal_fn(*full(a)), structs, where=f"{name} (the primal function)")
    out_leaves, out_tree = jax.tree_util.tree_flatten(out_shape)
    for k, leaf in enumerate(out_leaves):
        if kind_of(leaf.dtype) != "real":
            raise BadInput(f"output {k} of {name} has dtype {leaf.dtype}: only real outputs have cotangents")
    # the variables
    taken = set(param_names)
    variables = [argument_var(s, st) for s, st in zip(arg_specs, structs)]
    cot_names = ["dy"] if len(out_leaves) == 1 else [f"dy{k}" for k in range(len(out_leaves))]
    cots = [Var(_unique(n, taken), shape_polys(leaf.shape)) for n, leaf in zip(cot_names, out_leaves)]
    ct_structs = [jax.ShapeDtypeStruct(leaf.shape, leaf.dtype) for leaf in out_leaves]

    importer = Importer()
    arg_tensors = [argument_tensor(s, v, importer) for s, v in zip(arg_specs, variables)]
    primal = importer.run(closed_f, arg_tensors)

    # fwd and bwd, traced as one function (residuals become intermediate values).
    diff_names = [p for i, p in enumerate(param_names) if i not in nondiff]
    layout: dict = {}

    def combined(*flat):
        prim, cts = flat[:len(traced)], flat[len(traced):]
        args = full(prim)
        ct = jax.tree_util.tree_unflatten(out_tree, list(cts))
        if fwd_fn is not None:
            out, res = fwd_fn(*args)
        else:
            out, res = None, None
        grads = bwd_fn(args, res, ct)
        if not isinstance(grads, (tuple, list)):
            raise BadInput(f"the backward of {name} returned {type(grads).__name__}, not a tuple of cotangents")
        if len(grads) != len(diff_names):
            raise BadInput(f"the backward of {name} returned {len(grads)} cotangents for the "
                           f"{len(diff_names)} arguments ({', '.join(diff_names)})")
        present = [g is not None for g in grads]
        layout["present"] = present
        out_flat = _flatten(out)[0] if out is not None else []
        layout["n_out"] = len(out_flat)
        return list(out_flat) + [g for g in grads if g is not None]

    closed_c, _ = trace(combined, structs + ct_structs, where=f"the fwd and bwd rules of {name}")
    outs = importer.run(closed_c, arg_tensors + [Tensor.of(c) for c in cots])
    n_out = layout["n_out"]
    fwd_out = outs[:n_out] if fwd_fn is not None else None
    if fwd_out is not None and len(fwd_out) != len(primal):
        raise BadInput(f"the fwd rule of {name} returns {len(fwd_out)} primal outputs, {name} returns {len(primal)}")
    grads = iter(outs[n_out:])
    cotangents, diff, returned = {}, [], []
    kinds = {v: s.kind for s, v in zip(arg_specs, variables)}
    for p, present in zip(diff_names, layout["present"]):
        g = next(grads) if present else None
        if present:
            returned.append((p, g))
        if p not in traced:
            continue
        s = specs[p]
        if s.kind != "real":
            continue  # integer / boolean: no cotangent is claimed
        x = variables[traced.index(p)]
        if g is not None and g.shape != x.shape:
            raise BadInput(f"the backward of {name} returns a cotangent of shape "
                           f"({', '.join(map(str, g.shape))}) for {p} of shape ({', '.join(map(str, x.shape))})")
        cotangents[p] = g
        diff.append(p)
    for t in list(primal) + list(fwd_out or []) + [g for g in cotangents.values() if g is not None]:
        t.term()  # build every term now: the models of integer arguments are made on the way
    dtypes = {v: ("bool" if s.dtype == "bool" else s.dtype if s.kind == "int" else "float64")
              for s, v in zip(arg_specs, variables)}
    ob = Obligations(name, list(zip(arg_specs, variables)), diff, cots, primal, fwd_out, cotangents,
                     Domain.of(importer, kinds, dtypes), list(importer.assumptions))
    ob.primal_fn = lambda *a: primal_fn(*full(a))
    ob.combined_fn = combined
    ob.structs, ob.out_tree, ob.returned = structs, out_tree, returned
    return ob


def from_custom_vjp(fn, specs: dict, statics=None, name=None) -> Obligations:
    if not is_custom_vjp(fn):
        raise BadInput(f"{name or getattr(fn, '__name__', fn)!s} is not a jax.custom_vjp function")
    if getattr(fn, "fwd", None) is None or getattr(fn, "bwd", None) is None:
        raise BadInput(f"{name or fn.__name__} is a custom_vjp without rules: call defvjp(fwd, bwd)")
    name = name or getattr(fn, "__name__", None) or getattr(fn.fun, "__name__", "f")
    params = positional_parameters(fn.fun)
    nondiff = tuple(getattr(fn, "nondiff_argnums", ()) or ())

    def bwd(args, res, ct):
        return fn.bwd(*[args[i] for i in nondiff], res, ct)
    return build(name, fn.fun, fn.fwd, bwd, params, specs, nondiff, statics)


def from_pair(forward, backward, specs: dict, name=None) -> Obligations:
    """``backward(*primals, dy)`` returns one cotangent per primal."""
    name = name or getattr(forward, "__name__", "forward")
    params = positional_parameters(forward)

    def bwd(args, res, ct):
        return backward(*args, ct)
    return build(name, forward, None, bwd, params, specs)

