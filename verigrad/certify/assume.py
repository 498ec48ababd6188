"""Preconditions (``--assume``): hypotheses a certificate states and rests on (untrusted
parsing; what the kernel proves is exact for the reparametrized arguments).

A real backward is often right only under an assumption on its inputs: targets that sum
to one, a lower bound on a variance. Each assumption is modelled by an exact
reparametrization of its argument where one exists: a term ``R(P)`` in fresh variables
``P`` whose values, as ``P`` ranges over everything, are exactly the points satisfying
the assumption. The kernel then proves the claim for every ``P``, which is the claim for
every input satisfying the assumption, and nothing about the others:

=================================  ==================================================
``sum(t, a) == c``                 ``t[.., j, ..] = P[.., j, ..]`` for ``j < k - 1`` and
                                   ``c - sum_{q < k-1} P[.., q, ..]`` at ``j = k - 1``
                                   (``k`` the size of axis ``a``; as the one-hot model
                                   of integer labels)
``t >= c``, ``t > c``              ``t = c + P``, ``P`` non-negative (positive)
``t <= c``, ``t < c``              ``t = c - P``, ``P`` non-negative (positive)
``0 <= e < k`` (integers)          ``e[I] = floor(argsort(z)[p(I)] / N)``, ``p`` the row-major
                                   position, ``N`` the entries of ``e``, ``z`` a real vector
                                   of length ``N k``: exactly the arrays with entries in
                                   ``[0, k)`` (``k`` an integer expression of sizes)
``permutation(idx)`` (integers)    ``idx = argsort(P)``, ``P`` a real vector: every
                                   permutation of ``[0, n)`` is one (the kernel knows it
                                   is a permutation; inputs are drawn so)
``inv == argsort(idx)``            (integers) ``inv = argsort(R)``, ``R`` the model of
                                   ``idx``, which must be an argsort itself
                                   (``permutation(idx)``, or another ``== argsort``): a
                                   permutation has no ties, so ``inv`` is the inverse
                                   permutation whatever the sort
                                   (``jnp.argsort``, ``np.argsort``, ``idx.argsort()``;
                                   ``stable``, ``kind``, ``axis=0``/``-1`` accepted,
                                   ``descending=True`` refused); ``inv`` is computed from
                                   ``idx``'s draw. Refused: ``inv`` or ``idx`` not an
                                   integer vector, lengths that differ, ``idx`` without
                                   such a model (ties), ``inv`` with another assumption
``any(m, a)`` (a boolean mask)     a fact for the importer: a ``-inf`` mask made from
                                   ``m`` has an unmasked entry in every row along ``a``,
                                   so its row maximum is finite (exact for such masks);
                                   inputs are drawn with a true entry along ``a``
=================================  ==================================================

``c`` is a number or an arithmetic expression of numbers and size symbols
(``1/(4*m**2)``). A claim about the cotangent of a reparametrized argument is the
derivative over the whole space, evaluated at ``t = R(P)`` (a kernel ``At``).
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from fractions import Fraction

from verigrad.kernel import Argsort, Delta, Index, IntCond, IntDiv, IntVal, Lamda, Num, Sum, Var
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly, nonneg

from .obligations import BadInput


@dataclass
class Assumption:
    """One parsed assumption: its ``text``, the argument ``name``, the ``kind`` ('sum',
    'bound', 'any', 'perm', 'range' or 'argsort': ``value`` is then the name of argsort's
    argument) and its parameters."""
    text: str
    name: str
    kind: str
    axis: int = -1
    rel: str = ""
    value: object = None          # an ast expression of numbers and size symbols
    model: dict = field(default_factory=dict)   # filled by ``apply``: var, term, fresh


def parse(text: str) -> Assumption:
    """Read ``sum(t, -1) == 1``, ``t >= 1/(4*m**2)``, ``any(mask, -1)``, ``permutation(idx)``,
    ``0 <= idx < k``, ``inv == argsort(idx)``."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise BadInput(f"--assume {text!r}: not an expression (examples: 'sum(targets, -1) == 1', "
                       "'x >= 0.5', 'any(mask, -1)')") from None
    if isinstance(tree, ast.Call) and _fname(tree.func) == "any":
        name, axis = _reduction_args(tree, text)
        return Assumption(text, name, "any", axis)
    if isinstance(tree, ast.Call) and _fname(tree.func) == "permutation":
        if len(tree.args) != 1 or tree.keywords or not isinstance(tree.args[0], ast.Name):
            raise BadInput(f"--assume {text!r}: permutation() takes one argument's name")
        return Assumption(text, tree.args[0].id, "perm")
    if isinstance(tree, ast.Compare) and len(tree.ops) == 2 and isinstance(tree.comparators[0], ast.Name) \
            and isinstance(tree.left, ast.Constant) and tree.left.value == 0 \
            and isinstance(tree.ops[0], ast.LtE) and isinstance(tree.ops[1], ast.Lt):
        return Assumption(text, tree.comparators[0].id, "range", value=_constant(tree.comparators[1], text))
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1):
        raise BadInput(f"--assume {text!r}: expected a comparison such as 'sum(targets, -1) == 1' or 'x >= 0', "
                       "'0 <= idx < k', 'any(mask, -1)', 'permutation(idx)' or 'inv == argsort(idx)'")
    left, op, right = tree.left, tree.ops[0], tree.comparators[0]
    if isinstance(op, ast.Eq) and (_is_argsort(left) or _is_argsort(right)):
        return _parse_argsort(text, left, right)
    rel = {ast.Eq: "==", ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=", ast.Lt: "<"}.get(type(op))
    if rel is None:
        raise BadInput(f"--assume {text!r}: the relation must be ==, >=, >, <= or <")
    if isinstance(left, ast.Call) and _fname(left.func) == "sum" or _is_method_sum(left):
        if rel != "==":
            raise BadInput(f"--assume {text!r}: a sum is assumed equal to a value ('== c')")
        name, axis = _reduction_args(left, text)
        return Assumption(text, name, "sum", axis, "==", _constant(right, text))
    if isinstance(left, ast.Name) and rel != "==":
        return Assumption(text, left.id, "bound", rel=rel, value=_constant(right, text))
    if isinstance(right, ast.Name) and rel != "==":
        flip = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}[rel]
        return Assumption(text, right.id, "bound", rel=flip, value=_constant(left, text))
    raise BadInput(f"--assume {text!r}: supported forms are 'sum(t, axis) == c', 't >= c' (or >, <=, <), "
                   "'0 <= idx < k', 'any(mask, axis)', 'permutation(idx)' and 'inv == argsort(idx)'")


_NUMPY = ("jnp", "np", "numpy", "jax.numpy", "onp")


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _is_argsort(node) -> bool:
    """``argsort(a)``, ``jnp.argsort(a)`` (``np.``, ``numpy.``, ``jax.numpy.``) or ``a.argsort()``."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Name):
        return f.id == "argsort"
    return isinstance(f, ast.Attribute) and f.attr == "argsort"


def _parse_argsort(text: str, left, right) -> "Assumption":
    """``B == argsort(A)`` (either side): the integer argument ``B`` is the argsort of the
    integer argument ``A``."""
    if _is_argsort(left) and _is_argsort(right):
        raise BadInput(f"--assume {text!r}: one side must be an argument's name, the other argsort(A)")
    call, other = (right, left) if _is_argsort(right) else (left, right)
    if not isinstance(other, ast.Name):
        raise BadInput(f"--assume {text!r}: the side opposite argsort() must be an integer argument's name "
                       "('argsort_idx == argsort(idx)')")
    f, args = call.func, list(call.args)
    if isinstance(f, ast.Attribute):
        head = _dotted(f.value)
        if head not in _NUMPY:             # the method form a.argsort()
            if not isinstance(f.value, ast.Name):
                raise BadInput(f"--assume {text!r}: argsort's argument must be an argument's name")
            args = [f.value] + args
    if len(args) != 1 or not isinstance(args[0], ast.Name):
        raise BadInput(f"--assume {text!r}: argsort() takes one argument's name ('B == argsort(A)')")
    for k in call.keywords:
        try:
            v = ast.literal_eval(k.value)
        except ValueError:
            v = None
        if k.arg == "axis" and v in (0, -1) and not isinstance(v, bool):
            continue
        if k.arg == "stable" and isinstance(v, bool):
            continue              # a permutation has no ties: stable or not, the same order
        if k.arg == "descending" and v is False:
            continue
        if k.arg == "kind" and v in ("stable", "quicksort", "mergesort", "heapsort"):
            continue              # numpy's sort kinds: the same order without ties
        raise BadInput(f"--assume {text!r}: argsort() accepts only axis=0 or -1, stable=True/False, "
                       f"descending=False and a numpy kind=, not {k.arg}={ast.unparse(k.value)}")
    if other.id == args[0].id:
        raise BadInput(f"--assume {text!r}: an argument cannot be its own argsort")
    return Assumption(text, other.id, "argsort", value=args[0].id)


def _fname(f) -> str:
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _is_method_sum(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sum" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id not in ("jnp", "np", "numpy", "jax")


def _reduction_args(call, text):
    args = list(call.args)
    if isinstance(call.func, ast.Attribute) and _is_method_sum(call):
        args = [call.func.value] + args
    kw = {k.arg: k.value for k in call.keywords}
    if not args or not isinstance(args[0], ast.Name):
        raise BadInput(f"--assume {text!r}: the first argument must be an argument's name")
    axis_node = args[1] if len(args) > 1 else kw.get("axis")
    if axis_node is None:
        axis = -1
    else:
        try:
            axis = ast.literal_eval(axis_node)
        except ValueError:
            axis = None
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise BadInput(f"--assume {text!r}: the axis must be an integer")
    return args[0].id, axis


_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd)


def _constant(node, text):
    for n in ast.walk(node):
        if isinstance(n, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load)) or isinstance(n, _OPS):
            continue
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            continue
        raise BadInput(f"--assume {text!r}: the value must be numbers and size symbols with + - * / **")
    return node


def _value_term(node, sizes: dict, text: str) -> T.Term:
    """The kernel term of a constant expression (size symbols as integers): a number
    float64 cannot hold, and a division by zero, are refused (the kernel's ``1/0 = 0``
    would read ``x >= 1/0`` as ``x >= 0``, silently another assumption)."""
    from verigrad.frontends import jaxpr_scalar as S
    t = _value_term_of(node, sizes, text)
    v = S.num_value(t)
    if v is not None and abs(v) > Fraction(sys.float_info.max):
        raise BadInput(f"--assume {text!r}: the value {ast.unparse(node)} is beyond float64")
    return t


def _value_term_of(node, sizes: dict, text: str) -> T.Term:
    from verigrad.frontends import jaxpr_scalar as S
    if isinstance(node, ast.Constant):
        return S.number(node.value) if isinstance(node.value, float) else Num(node.value)
    if isinstance(node, ast.Name):
        if node.id not in sizes:
            raise BadInput(f"--assume {text!r}: {node.id} is not a size symbol of the shapes")
        return IntVal(Poly.sym(sizes[node.id]))
    if isinstance(node, ast.UnaryOp):
        v = _value_term(node.operand, sizes, text)
        return S.neg(v) if isinstance(node.op, ast.USub) else v
    a, b = _value_term(node.left, sizes, text), _value_term(node.right, sizes, text)
    if isinstance(node.op, ast.Add):
        return S.add(a, b)
    if isinstance(node.op, ast.Sub):
        return S.sub(a, b)
    if isinstance(node.op, ast.Mult):
        return S.mul(a, b)
    if isinstance(node.op, ast.Div):
        if S.num_value(b) == 0:
            raise BadInput(f"--assume {text!r}: {ast.unparse(node)} divides by zero")
        return S.div(a, b)
    e = S.num_value(b)
    if e is None:
        raise BadInput(f"--assume {text!r}: an exponent must be a number")
    return S.power(a, Fraction(e))


def apply(assumptions: list, ob) -> dict:
    """Reparametrize ``ob``'s arguments: ``{Var t: (term R, [fresh Vars], text)}``; also
    records every assumption on the domain (sampling) and in ``ob.hypotheses``."""
    specs = {s.name: (s, v) for s, v in ob.args}
    sizes = {}
    for _, v in ob.args:
        for s in v.sizes:
            sizes[s.name] = s
    out: dict = {}
    hyps = []
    for a in assumptions:
        if a.kind == "argsort":
            continue                 # after the others: B's model is made from A's
        if a.name not in specs:
            known = ", ".join(specs) or "none"
            raise BadInput(f"--assume {a.text!r}: {a.name} is not an argument with a shape (arguments: {known})")
        spec, var = specs[a.name]
        if a.kind == "any":
            if spec.kind != "bool":
                raise BadInput(f"--assume {a.text!r}: any() is for boolean masks; {a.name} is {spec.dtype}")
            axis = a.axis % len(var.shape) if var.shape else None
            if axis is None:
                raise BadInput(f"--assume {a.text!r}: {a.name} is a scalar")
            ob.domain.any_axes.setdefault(var, []).append(axis)
            hyps.append(f"assumes {a.text} (every row of {a.name} along axis {axis} has a true entry: the "
                        "importer reads a -inf mask's row maximum as finite there; inputs drawn so)")
            continue
        if a.kind == "perm":
            if spec.kind != "int" or len(var.shape) != 1 or var in out:
                raise BadInput(f"--assume {a.text!r}: permutation() is for a vector of integers (one assumption "
                               "per argument)")
            P = Var(f"{a.name}_keys", var.shape)
            out[var] = (Argsort(P), [P], a.text)
            ob.domain.derived[var] = out[var][0]
            ob.domain.model_vars.append(P)
            hyps.append(f"assumes {a.text} ({a.name} = argsort({P.name}): every permutation of "
                        f"[0, {var.shape[0]!r}) is the argsort of some real vector)")
            continue
        if a.kind == "range":
            if spec.kind != "int" or not var.shape or var in out:
                raise BadInput(f"--assume {a.text!r}: '0 <= idx < k' is for an array of integers (one assumption "
                               "per argument)")
            k = size_bound(a.value, sizes, a.text)
            R, z, N = _range_model(var, k)
            out[var] = (R, [z], a.text)
            ob.domain.derived[var] = R
            ob.domain.model_vars.append(z)
            hyps.append(f"assumes {a.text} ({a.name} at row-major position p is floor(argsort({z.name})[p] / "
                        f"{N!r}): every array with entries in [0, {k!r}) is one)")
            continue
        if spec.kind != "real":
            raise BadInput(f"--assume {a.text!r}: {a.name} is {spec.dtype}; this form is for real arguments")
        if var in out:
            raise BadInput(f"--assume {a.text!r}: {a.name} already has an assumption (one per argument)")
        c = _value_term(a.value, sizes, a.text)
        if a.kind == "sum":
            if not var.shape:
                raise BadInput(f"--assume {a.text!r}: {a.name} is a scalar")
            if not -len(var.shape) <= a.axis < len(var.shape):
                raise BadInput(f"--assume {a.text!r}: {a.name} has no axis {a.axis}")
            axis = a.axis % len(var.shape)
            P = Var(f"{a.name}_free", var.shape)
            R = _sum_model(P, axis, c)
            how = (f"{a.name} = {P.name} with its last entry along axis {axis} replaced by {c} minus the others")
        else:
            strict = a.rel in (">", "<")
            P = Var(f"{a.name}_excess", var.shape, ("positive",) if strict else ("nonneg",))
            idx = [T.IndexVar(f"i{j}", s) for j, s in enumerate(var.shape)]
            entry = P[tuple(Poly.sym(i) for i in idx)] if idx else P
            body = (c + entry) if a.rel in (">", ">=") else (c - entry)
            R = Lamda(idx, body) if idx else body
            how = f"{a.name} = {c} {'+' if a.rel in ('>', '>=') else '-'} {P.name}, {P.name} {'> 0' if strict else '>= 0'}"
        out[var] = (R, [P], a.text)
        ob.domain.derived[var] = R
        ob.domain.model_vars.append(P)
        hyps.append(f"assumes {a.text} ({how})")
    _apply_argsorts([a for a in assumptions if a.kind == "argsort"], specs, out, ob, hyps)
    ob.hypotheses = hyps
    return out


def _apply_argsorts(pending: list, specs: dict, out: dict, ob, hyps: list) -> None:
    """``B == argsort(A)``: ``B := argsort(R_A)``, ``R_A`` the model of ``A``. Exact when
    ``R_A`` is itself an argsort (``permutation(A)``, or another ``== argsort``): its values
    are permutations, which have no ties, so every sort orders them the same way and
    ``argsort(R_A)`` is the inverse permutation (the kernel's ``argsort_inverse``). Resolved
    in dependency order (``C == argsort(B)`` after ``B == argsort(A)``); anything else is
    refused."""
    for a in pending:
        for name, role in ((a.name, "the argument it defines"), (a.value, "argsort's argument")):
            if name not in specs:
                known = ", ".join(specs) or "none"
                raise BadInput(f"--assume {a.text!r}: {name} ({role}) is not an argument with a shape "
                               f"(arguments: {known})")
            spec, var = specs[name]
            if spec.kind != "int" or len(var.shape) != 1:
                raise BadInput(f"--assume {a.text!r}: {name} is {spec.dtype} of rank {len(var.shape)}; "
                               "'B == argsort(A)' is for two vectors of integers")
        b, src = specs[a.name][1], specs[a.value][1]
        if tuple(b.shape) != tuple(src.shape):
            raise BadInput(f"--assume {a.text!r}: {a.name} has shape ({', '.join(map(repr, b.shape))}) and "
                           f"{a.value} ({', '.join(map(repr, src.shape))}); argsort keeps the length")
    names = [a.name for a in pending]
    for a in pending:
        if names.count(a.name) > 1:
            raise BadInput(f"--assume {a.text!r}: {a.name} is defined by more than one '== argsort(...)'")
        if specs[a.name][1] in out:
            raise BadInput(f"--assume {a.text!r}: {a.name} already has an assumption; '{a.name} == argsort(...)' "
                           f"defines it entirely (it is then a permutation: state no other)")
    todo = list(pending)
    while todo:
        ready = [a for a in todo if specs[a.value][1] in out]
        if not ready:
            a = todo[0]
            if a.value in [t.name for t in todo]:
                raise BadInput(f"--assume {a.text!r}: the '== argsort(...)' assumptions define each other in a cycle")
            raise BadInput(f"--assume {a.text!r}: {a.value} has no model that makes argsort({a.value}) exact "
                           f"(with ties its order depends on the sort); state --assume 'permutation({a.value})' too")
        for a in ready:
            todo.remove(a)
            b, src = specs[a.name][1], specs[a.value][1]
            R_src, fresh, why = out[src]
            if not isinstance(R_src, Argsort):
                raise BadInput(f"--assume {a.text!r}: {a.value}'s assumption {why!r} allows ties, so "
                               f"argsort({a.value}) depends on the sort's tie order; 'B == argsort(A)' needs "
                               f"'permutation({a.value})'")
            R = Argsort(R_src)
            out[b] = (R, list(fresh), a.text)
            ob.domain.derived[b] = R
            hyps.append(f"assumes {a.text} ({a.name} = {R!r}, with {a.value} = {R_src!r}: the inverse "
                        f"permutation of {a.value}, exact since a permutation has no ties; inputs are drawn so, "
                        f"{a.name} computed from {a.value})")


def size_bound(node, sizes: dict, text: str) -> Poly:
    """A bound that is an integer expression of sizes (``k``, ``2*k``, ``8``)."""
    from verigrad.frontends import jaxpr_scalar as S
    p = S.int_poly(_value_term(node, sizes, text))
    if p is None or not nonneg(p - 1):
        raise BadInput(f"--assume {text!r}: the bound must be an integer expression of sizes, >= 1")
    return p


def _range_model(var: Var, k: Poly):
    """``var[I] = floor(argsort(z)[f(I)] / N)``, ``f`` the row-major position, ``N`` the
    entries of ``var``, ``z`` a free real vector of length ``N k``: each value lies in
    ``[0, k)``, and every array with entries there is one (``z`` ordering positions
    ``e[I] N + f(I)`` first)."""
    N, f = Poly.const(1), Poly.const(0)
    idx = [T.IndexVar(f"i{j}", s) for j, s in enumerate(var.shape)]
    for i, s in zip(idx, var.shape):
        f, N = f * s + Poly.sym(i), N * s
    z = Var(f"{var.name}_keys", (N * k,))
    return Lamda(idx, IntDiv(Index(Argsort(z), (f,)), N)), z, N


def _sum_model(P: Var, axis: int, c: T.Term) -> T.Term:
    idx = [T.IndexVar(f"i{j}", s) for j, s in enumerate(P.shape)]
    k = P.shape[axis]
    q = T.IndexVar("q", k)
    at = [Poly.sym(i) for i in idx]
    j = at[axis]
    others = list(at)
    others[axis] = Poly.sym(q)
    rest = Sum(q, IntCond(Poly.sym(q), "<", k - 1) * P[tuple(others)])
    body = IntCond(j, "<", k - 1) * P[tuple(at)] + Delta(j, k - 1) * (c - rest)
    return Lamda(idx, body)
