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

import dataclasses
import inspect
from dataclasses import dataclass, field

from verigrad.frontends.jaxpr import (Importer, JaxprImportError, Tensor, argument_tensor, argument_var, import_session,
                                      kind_of, shape_polys, symbolic_structs, trace)
from verigrad.kernel import Lamda, Num, Term, Var, vjp_statement
from verigrad.kernel import IndexVar
from verigrad.kernel.sizes import Poly
from verigrad.kernel import terms as T
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
    stopped: list = field(default_factory=list)    # [(Var, Term)]: stop_gradient variables and their values
    primal_raw: list = field(default_factory=list)  # f's output terms with the stop_gradient variables free
    outputs: list | None = None                    # the outputs claimed about (None: all)
    statics: dict = field(default_factory=dict)    # arguments held at a Python value
    alive: dict = field(default_factory=dict)      # boolean argument Var -> {axis}: ``any(mask, axis)`` assumed

    def var(self, name: str) -> Var:
        return next(v for s, v in self.args if s.name == name)

    def selected(self) -> list:
        """The positions of the outputs the claims are about."""
        return list(range(len(self.primal))) if self.outputs is None else list(self.outputs)

    def expected(self, name: str) -> Term:
        """``sum_j J_{f_j}^T dy_j`` for argument ``name`` (over the selected outputs; with
        the stop_gradient variables free, held fixed by the derivative)."""
        x = self.var(name)
        raw = self.primal_raw or [f.term() for f in self.primal]
        parts = [vjp_statement(raw[j], x, self.cots[j]) for j in self.selected()]
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


def _risky_cotangents(importer, cotangents) -> dict:
    """``{argument: (its [finite] tensor, where the risk arose)}`` for the cotangents JAX
    may compute as NaN or infinite (a log, a division, a square root outside its domain):
    where they are, the kernel's total reading
    (``0 * log(u) = 0``, ``0^-1 = 0``) agrees with the math, not with XLA, so the
    backward's finiteness is a claim of its own. It is claimed everywhere, also where the
    forward may be non-finite: that a forward is non-finite somewhere (``log(x^2)`` at 0)
    says nothing of the other inputs, and "finite wherever the forward is" would need a
    product over all of the forward's entries, which the kernel has no term for. So a
    backward non-finite exactly where its forward is (``2/x`` for ``log(x^2)``) is not
    PROVED: sound, incomplete."""
    from verigrad.frontends.jaxpr_rules import FINITE, facts
    out = {}
    for p, g in cotangents.items():
        f = facts(importer, g) if g is not None else None
        if f is not None and f.risk > FINITE:
            out[p] = (f.make_fin() if f.fin is None else f.fin, f.origin)
    return out


def _risky_forward(importer, fwd_out, primal, selected, stopped) -> dict:
    """``{k: (fwd's [finite] tensor, f's [finite] term, origin)}`` for each claimed output
    of the fwd rule the importer cannot show finite. The claim ``fwd(x)[k] = f(x)[k]`` is
    proved in the kernel's total reading (``0 * log u = 0``), while JAX computes NaN where
    ``u`` leaves the domain; the output JAX carries on with is the fwd rule's, so it must be
    finite wherever ``f``'s is (red team RT4-A: ``3 x + 0 * log(1e8 - x*x)`` was PROVED
    the fwd of ``3 x``, NaN for |x| > 1e4). Claimed as ``[f finite] [fwd finite] =
    [f finite]``, ``f``'s indicator with the stop_gradient values in the arguments."""
    from verigrad.frontends.jaxpr_rules import FINITE, facts, finite
    out = {}
    if fwd_out is None:
        return out
    for k in selected:
        fo = facts(importer, fwd_out[k])
        if fo.risk > FINITE:
            fin_p = finite(importer, primal[k]).term()
            if stopped:
                fin_p = T.subst(fin_p, dict(stopped))
            out[k] = (finite(importer, fwd_out[k]), fin_p, fo.origin)
    return out


@dataclass
class Settings:
    """How a claim is read: ``outputs`` (positions claimed about; None: all), ``wrt``
    (arguments claimed about; None: every real one), ``minimum`` (lower bounds of size
    symbols), ``stop_gradient`` ('jax': derivative zero, as JAX differentiates;
    'identity': the value passes, the mathematical reading), ``defaults`` (parameters
    with a default and no shape are held at it)."""
    outputs: list | None = None
    wrt: list | None = None
    minimum: dict = field(default_factory=dict)
    stop_gradient: str = "identity"
    defaults: dict = field(default_factory=dict)
    mask_as_inf: bool = False
    alive: dict = field(default_factory=dict)      # boolean argument name -> [axis]: ``any(mask, axis)``
    ranges: dict = field(default_factory=dict)     # integer argument name -> [bound(sizes) -> k]: ``0 <= e < k``
    at_sizes: dict = field(default_factory=dict)   # SizeSym -> int: a rebuild at concrete sizes (its bounds)


def build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs: dict, nondiff=(), statics: dict | None = None,
          structs=None, settings: Settings | None = None, check_rules: bool = True):
    """Trace and import. ``fwd_fn(*args) -> (out, res)`` (or None), ``bwd_fn(args, res, ct)``
    returns the cotangent of each argument not in ``nondiff`` (``None`` allowed).
    ``structs`` (optional, one ``jax.ShapeDtypeStruct`` per traced argument) are used
    instead of parsing the specs' dimensions: a function built at symbolic sizes must be
    traced in the symbolic scope it was built in. The result's ``rebuild(structs, sizes)``
    imports the same functions again at other (concrete) shapes, ``sizes`` the assignment
    that gives them (``exact_sizes``); ``check_rules`` False skips the inner custom rules'
    check there (it is the first import's)."""
    settings = settings or Settings()
    with import_session():
        ob = _build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs, nondiff, statics, structs, settings,
                    check_rules)
    ob.rebuild = lambda concrete, sizes: build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs, nondiff,
                                               statics, concrete, dataclasses.replace(settings, at_sizes=sizes),
                                               check_rules=False)
    return ob


def _build(name, primal_fn, fwd_fn, bwd_fn, param_names, specs, nondiff, statics, given_structs, settings,
           check_rules=True):
    import jax
    statics = dict(statics or {})
    for p, v in settings.defaults.items():     # a parameter with a default and no shape: held at it
        if p not in specs and p not in statics:
            statics[p] = v
    missing = [p for p in param_names if p not in specs and p not in statics]
    extra = [k for k in list(specs) + list(statics) if k not in param_names]
    both = [k for k in specs if k in statics]
    if missing or extra or both:
        raise BadInput(f"{name} takes ({', '.join(param_names)}); "
                       + "; ".join(x for x in (
                           f"no shape given for {', '.join(missing)}" if missing else "",
                           f"no argument named {', '.join(extra)}" if extra else "",
                           f"{', '.join(both)} given both a shape and a value" if both else "") if x))
    traced = [p for p in param_names if p in specs]
    arg_specs = [specs[p] for p in traced]
    structs = list(given_structs) if given_structs is not None else symbolic_structs(arg_specs, settings.minimum)

    def full(arrays):
        it = iter(arrays)
        return [statics[p] if p in statics else next(it) for p in param_names]

    # f, traced alone.
    closed_f, out_shape = trace(lambda *a: primal_fn(*full(a)), structs, where=f"{name} (the primal function)")
    out_leaves, out_tree = jax.tree_util.tree_flatten(out_shape)
    outputs = settings.outputs
    if outputs is not None:
        for k in outputs:
            if not 0 <= k < len(out_leaves):
                raise BadInput(f"--output {k}: {name} has {len(out_leaves)} output{'s' * (len(out_leaves) != 1)} "
                               f"(0 to {len(out_leaves) - 1})")
        outputs = sorted(set(outputs))
    for k, leaf in enumerate(out_leaves):
        if kind_of(leaf.dtype) != "real" and (outputs is None or k in outputs):
            raise BadInput(f"output {k} of {name} has dtype {leaf.dtype}: only real outputs have cotangents"
                           + ("" if outputs is not None else "; claim about the others with --output"))
    # the variables
    taken = set(param_names)
    variables = [argument_var(s, st) for s, st in zip(arg_specs, structs)]
    cot_names = ["dy"] if len(out_leaves) == 1 else [f"dy{k}" for k in range(len(out_leaves))]
    cots = [Var(_unique(n, taken), shape_polys(leaf.shape)) for n, leaf in zip(cot_names, out_leaves)]
    ct_structs = [jax.ShapeDtypeStruct(leaf.shape, leaf.dtype if kind_of(leaf.dtype) == "real"
                                       else jax.dtypes.float0) for leaf in out_leaves]

    importer = Importer()
    importer.mask_as_inf = settings.mask_as_inf
    for s_, v in zip(arg_specs, variables):
        if s_.name in settings.alive and s_.kind == "bool" and v.shape:
            importer.alive[v] = {a % len(v.shape) for a in settings.alive[s_.name]}
    importer.ranges = _range_bounds(settings, arg_specs, variables)
    arg_tensors = [argument_tensor(s, v, importer) for s, v in zip(arg_specs, variables)]
    # f is the differentiated function: stop_gradient as the settings read it
    importer.stop_mode = settings.stop_gradient
    primal = importer.run(closed_f, arg_tensors)
    primal_tensors = list(primal)       # with the importer's facts (finiteness) kept
    importer.stop_mode = "identity"
    stopped = []
    for var, value in importer.stopped:     # values in the arguments only (earlier ones substituted)
        stopped.append((var, T.subst(value.term(), dict(stopped)) if stopped else value.term()))
    primal_raw = [t.term() if kind_of(leaf.dtype) == "real" else None for t, leaf in zip(primal, out_leaves)]
    if stopped:
        primal = [Tensor.of(T.subst(t, dict(stopped))) if t is not None else p for t, p in zip(primal_raw, primal)]

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
        if settings.wrt is not None and p not in settings.wrt:
            continue
        x = variables[traced.index(p)]
        if g is not None and g.shape != x.shape:
            raise BadInput(f"the backward of {name} returns a cotangent of shape "
                           f"({', '.join(map(str, g.shape))}) for {p} of shape ({', '.join(map(str, x.shape))})")
        cotangents[p] = g
        diff.append(p)
    if settings.wrt is not None:
        real = [p for p in traced if specs[p].kind == "real"]
        if bad := [p for p in settings.wrt if p not in real]:
            raise BadInput(f"--wrt {bad[0]}: not a real argument of {name} with a shape "
                           f"(its real arguments: {', '.join(real) or 'none'})")
    sel = list(range(len(out_leaves))) if outputs is None else outputs
    for k in sel:
        primal[k].term()
        if fwd_out is not None:
            fwd_out[k].term()
    for t in [g for g in cotangents.values() if g is not None]:
        t.term()  # build every term now: the models of integer arguments are made on the way
    dtypes = {v: ("bool" if s.dtype == "bool" else s.dtype if s.kind == "int" else "float64")
              for s, v in zip(arg_specs, variables)}
    ob = Obligations(name, list(zip(arg_specs, variables)), diff, cots, primal, fwd_out, cotangents,
                     Domain.of(importer, kinds, dtypes), list(importer.assumptions))
    ob.stopped, ob.primal_raw, ob.outputs, ob.statics = stopped, primal_raw, outputs, statics
    ob.mask_as_inf = settings.mask_as_inf
    ob.alive = dict(importer.alive)
    ob.size_cap = getattr(importer, "size_cap", None)
    ob.custom_operands = dict(importer.__dict__.get("custom_operands", {}))   # id(eqn) -> [[Tensor]]
    ob.risky = _risky_cotangents(importer, cotangents)
    ob.risky_forward = _risky_forward(importer, fwd_out, primal_tensors, sel, stopped)
    from .validate import has_narrow_types
    ob.narrow_types = has_narrow_types(closed_f) or has_narrow_types(closed_c)
    ob.out_dtypes = [leaf.dtype for leaf in out_leaves]
    ob.primal_fn = lambda *a: primal_fn(*full(a))
    ob.combined_fn = combined
    ob.structs, ob.out_tree, ob.returned = structs, out_tree, returned
    ob.jaxprs = (closed_f, closed_c)      # the closed jaxprs imported (the primal's, fwd and bwd's)
    ob.given_structs = given_structs is not None
    ob.stop_gradient = settings.stop_gradient
    ob.minimum = dict(settings.minimum)
    from .custom_rules import check as check_custom_rules, custom_call_names, has_custom_calls, trace_rules
    ob.custom_rules = custom_call_names(closed_f) if has_custom_calls(closed_f) else []
    if ob.custom_rules and settings.stop_gradient == "jax" and check_rules:
        # the importer reads an inner custom_jvp/custom_vjp by its primal body; JAX differentiates
        # by its rule: the two must agree, or nothing is claimed (red team RT-35)
        trace_rules(closed_f)
        problem = check_custom_rules(ob)
        if problem is not None:
            raise JaxprImportError(problem, located=True)
    return ob


def parameter_defaults(fn) -> dict:
    """The positional parameters of ``fn`` that have a default value, with it."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is not p.empty}


def _range_bounds(settings: Settings, arg_specs, variables) -> dict:
    """The bounds ``k`` of the preconditions ``0 <= e < k``, per integer argument ``Var``
    (the importer's one-hot model uses them). At concrete shapes (``exact_sizes``' rebuild)
    a bound is read at the sizes of the rebuild, ``settings.at_sizes``."""
    at = {s.name: s for s in settings.at_sizes}
    sizes = {s.name: s for v in variables for s in v.sizes} if not at else at
    values = {s: Poly.const(n) for s, n in settings.at_sizes.items()}
    out = {}
    for s_, v in zip(arg_specs, variables):
        if s_.kind == "int" and s_.name in settings.ranges:
            out[v] = [bound(sizes).subst(values) for bound in settings.ranges[s_.name]]
    return out


def _with_defaults(settings, fn):
    settings = settings or Settings()
    if not settings.defaults:
        settings = dataclasses.replace(settings, defaults=parameter_defaults(fn))
    return settings


def from_custom_vjp(fn, specs: dict, statics=None, name=None, settings: Settings | None = None) -> Obligations:
    if not is_custom_vjp(fn):
        raise BadInput(f"{name or getattr(fn, '__name__', fn)!s} is not a jax.custom_vjp function")
    if getattr(fn, "fwd", None) is None or getattr(fn, "bwd", None) is None:
        raise BadInput(f"{name or fn.__name__} is a custom_vjp without rules: call defvjp(fwd, bwd)")
    name = name or getattr(fn, "__name__", None) or getattr(fn.fun, "__name__", "f")
    params = positional_parameters(fn.fun)
    nondiff = tuple(getattr(fn, "nondiff_argnums", ()) or ())

    def bwd(args, res, ct):
        return fn.bwd(*[args[i] for i in nondiff], res, ct)
    return build(name, fn.fun, fn.fwd, bwd, params, specs, nondiff, statics, settings=_with_defaults(settings, fn.fun))


def custom_gradient_function(fn):
    """The user's ``f(*args) -> (out, vjp)`` of a ``jax.custom_gradient`` function, or None."""
    if not is_custom_vjp(fn):
        return None
    inner = fn.fun
    code = getattr(inner, "__code__", None)
    if getattr(inner, "__qualname__", "") != "custom_gradient.<locals>.wrapped_fun" or code is None:
        return None
    cells = dict(zip(code.co_freevars, inner.__closure__ or ()))
    cell = cells.get("fun")
    return cell.cell_contents if cell is not None else None


def from_custom_gradient(fn, specs: dict, statics=None, name=None, settings: Settings | None = None) -> Obligations:
    """A ``jax.custom_gradient`` function (the user wrote ``f(*args) -> (out, vjp)``): its
    primal is the first result, its backward ``vjp(ct)``, one cotangent per argument."""
    inner = custom_gradient_function(fn)
    if inner is None:
        raise BadInput(f"{name or getattr(fn, '__name__', fn)!s} is not a jax.custom_gradient function")
    name = name or getattr(inner, "__name__", "f")
    params = positional_parameters(inner)

    def primal(*args):
        return inner(*args)[0]

    def fwd(*args):
        return inner(*args)

    def bwd(args, vjp, ct):
        g = vjp(ct)
        return tuple(g) if isinstance(g, (tuple, list)) else (g,)
    return build(name, primal, fwd, bwd, params, specs, (), statics, settings=_with_defaults(settings, inner))


def from_pair(forward, backward, specs: dict, name=None, settings: Settings | None = None) -> Obligations:
    """``backward(*primals, dy)`` returns one cotangent per primal."""
    name = name or getattr(forward, "__name__", "forward")
    params = positional_parameters(forward)

    def bwd(args, res, ct):
        return backward(*args, ct)
    return build(name, forward, None, bwd, params, specs, settings=_with_defaults(settings, forward))
