"""Terms over real tensors with symbolic sizes (trusted).

Every term has a ``shape`` (a tuple of size ``Poly``s; ``()`` for a scalar) and is
hash-consed: building the same term twice gives the same object, so equality is
identity and shared subterms cost nothing. Constructors check shapes and index
ranges and raise ``KernelError`` naming the offending subterm.
"""
from __future__ import annotations

import inspect
from fractions import Fraction

from .sizes import (IndexVar, IntSym, KernelError, Poly, SizeSym, _Frozen, _intern, _set, as_poly, check_name,
                    lone_index, nonneg, plain, poly_str, spell)

_interned: dict = {}
_raw: dict = {}

ELEMENTARY = ("exp", "log", "tanh", "erf", "sin", "cos")
FACTS = ("positive", "nonneg", "nonzero", "integer")


def _shape_str(shape) -> str:
    return "(" + ", ".join(poly_str(s) for s in shape) + ")"


class Term(_Frozen):
    """Base class of all terms. A subclass's ``_canon`` checks the constructor's arguments
    and returns them in canonical form; they are kept under its parameter names, and its
    ``_build`` sets ``shape`` and ``skey``. Set here from the arguments: ``free_idx`` (the
    free index variables of the subterms and integer expressions, less the index
    variables among the arguments, which are bound), ``atoms`` (the variables and function
    symbols occurring), ``sizes``, ``has_at`` and ``mentions`` (the atoms including those
    an ``At`` binds), and ``reserved`` (some index, free or bound, is one of the kernel's
    own: such a term is refused by every rule). Terms are immutable."""

    __slots__ = ("_args", "shape", "_skey", "free_idx", "atoms", "sizes", "has_at", "mentions", "reserved",
                 "__weakref__", "__dict__")

    def __new__(cls, *args, **kw):
        try:                                    # the same raw arguments: already checked
            raw = (cls, args, tuple(kw.items()))
            hit = _raw.get(raw)
        except TypeError:                       # unhashable (a list): no fast path
            raw = hit = None
        if hit is not None:
            return hit
        args = cls._canon(*args, **kw)
        key = (cls, args)
        obj = _interned.get(key)
        if obj is None:
            if not plain(args):
                raise KernelError(f"{cls.__name__}{args!r}: a name, relation or number is not a plain str, int or Fraction")
            obj = object.__new__(cls)
            put = object.__setattr__
            put(obj, "_args", args)
            for name, a in zip(cls._fields, args):
                put(obj, name, a)
            kids, free, atoms, sizes, bound, reserved = [], set(), set(), set(), set(), False
            for x in args:
                for a in (x if isinstance(x, tuple) else (x,)):
                    if isinstance(a, Term):
                        kids.append(a)
                        free |= a.free_idx
                        atoms |= a.atoms
                        sizes |= a.sizes
                        reserved = reserved or a.reserved
                    elif isinstance(a, Poly):
                        free |= a.index_vars()
                        sizes |= _size_syms(a)
                        reserved = reserved or any(v.tag for v in a.index_vars())
                    elif isinstance(a, IndexVar):
                        bound.add(a)
                        sizes |= _size_syms(a.size)
                        reserved = reserved or bool(a.tag)
                    elif isinstance(a, _Symbol):
                        atoms.add(a)
                        sizes |= a.sizes
            put(obj, "free_idx", frozenset(free - bound))
            put(obj, "atoms", frozenset(atoms))
            put(obj, "reserved", reserved)
            obj._build(*args)
            put(obj, "sizes", frozenset(sizes.union(*map(_size_syms, obj.shape))))
            put(obj, "has_at", cls is At or any(k.has_at for k in kids))
            put(obj, "mentions", obj.atoms.union(*(k.mentions for k in kids), obj.params if cls is At else ())
                if obj.has_at else obj.atoms)
            _interned[key] = obj
        if raw is not None and plain(raw[1]) and plain(raw[2]):
            _raw[raw] = obj                     # (other raw arguments may equal, and so poison, honest ones: RT12-B)
        return obj

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._fields = tuple(inspect.signature(cls._canon).parameters)

    def _set(self, shape, skey, atoms=None, **extra):
        put = object.__setattr__
        put(self, "shape", tuple(shape))
        put(self, "_skey", skey)
        if atoms is not None:
            put(self, "atoms", frozenset(atoms))
        for k, v in extra.items():
            put(self, k, v)

    @property
    def skey(self) -> str:
        """A total-order key (built on demand: for a shared term it can be long)."""
        if not isinstance(self._skey, str):
            object.__setattr__(self, "_skey", self._skey())
        return self._skey

    def __reduce__(self):
        return (type(self), self._args)

    def __lt__(self, other):
        return self.skey < other.skey

    # -- operator sugar; each maps one-to-one onto a constructor --------------------
    __add__ = lambda self, o: Add((self, as_term(o)))  # noqa: E731
    __radd__ = lambda self, o: Add((as_term(o), self))  # noqa: E731
    __neg__ = lambda self: Mul((Num(-1), self))  # noqa: E731
    __sub__ = lambda self, o: Add((self, -as_term(o)))  # noqa: E731
    __rsub__ = lambda self, o: Add((as_term(o), -self))  # noqa: E731
    __mul__ = lambda self, o: Mul((self, as_term(o)))  # noqa: E731
    __rmul__ = lambda self, o: Mul((as_term(o), self))  # noqa: E731
    __truediv__ = lambda self, o: Mul((self, Pow(as_term(o), -1)))  # noqa: E731
    __rtruediv__ = lambda self, o: Mul((as_term(o), Pow(self, -1)))  # noqa: E731
    __pow__ = lambda self, e: Pow(self, e)  # noqa: E731

    def __getitem__(self, idx):
        return Index(self, idx if isinstance(idx, tuple) else (idx,))

# Display (repr, LaTeX) is attached by the printer, outside the kernel
# (verigrad.report.printing), as in HOL Light.


def map_args(t: Term, f, fp=None) -> Term:
    """``t`` rebuilt (and re-checked) with ``f`` applied to each direct subterm and
    ``fp`` (if given) to each integer expression among its arguments (and in their tuples,
    which do not nest further)."""
    one = lambda a: f(a) if isinstance(a, Term) else fp(a) if fp and isinstance(a, Poly) else a  # noqa: E731
    return type(t)(*[tuple(map(one, a)) if isinstance(a, tuple) else one(a) for a in t._args])


def as_term(x) -> Term:
    if isinstance(x, Term):
        return x
    if isinstance(x, bool):
        raise KernelError(f"{x!r} is not a real term")
    if isinstance(x, (int, Fraction, float)):
        return Num(x)
    if isinstance(x, (Poly, IntSym)):
        return IntVal(x)
    raise KernelError(f"{x!r} ({type(x).__name__}) is not a term")


def _check_index(e: Poly, size: Poly, where):
    v = lone_index(e)
    if v is not None and v.size is size:            # an index on its own axis: 0 <= v < size
        return
    if not (nonneg(e) and nonneg(size - 1 - e)):   # ``where`` is formatted only when raising
        raise KernelError(f"index {poly_str(e)} is not provably inside [0, {poly_str(size)}) in {where}")


# -- leaves ------------------------------------------------------------------------------

class Var(Term):
    """A tensor (or scalar, shape ``()``) variable with optional entrywise facts:
    ``positive``, ``nonneg``, ``nonzero``, ``integer`` (integer data: labels, lengths; no
    derivative is taken with respect to it)."""

    @classmethod
    def _canon(cls, name, shape=(), facts=()):
        check_name(name, "variable")
        shape = tuple([as_poly(s) for s in shape])
        for s in shape:
            if s.index_atoms():
                raise KernelError(f"variable {name}: size {s} depends on an index")
            if not nonneg(s - 1):
                raise KernelError(f"variable {name}: size {s} is not provably >= 1")
        facts = frozenset(facts)
        if bad := facts - set(FACTS):
            raise KernelError(f"variable {name}: unknown facts {sorted(bad)} (known: {', '.join(FACTS)})")
        if "positive" in facts:
            facts |= {"nonneg", "nonzero"}
        return name, shape, tuple(sorted(facts))

    def _build(self, name, shape, facts):
        self._set(shape, lambda: f"V:{spell(name)}{''.join('.' + s.skey for s in shape)}" + ("!" + ",".join(facts) if facts else ""),
                  (self,), facts=frozenset(facts))


class Num(Term):
    """A rational constant."""

    @classmethod
    def _canon(cls, value):
        if isinstance(value, bool) or not isinstance(value, (int, Fraction, float)):
            raise KernelError(f"{value!r} is not a rational number")
        return (Fraction(value),)

    def _build(self, value):
        self._set((), lambda: f"N:{value}")


class Const(Term):
    """A named real constant: ``pi`` (positive)."""

    @classmethod
    def _canon(cls, name):
        if name != "pi":
            raise KernelError(f"unknown constant {name!r}")
        return (name,)

    def _build(self, name):
        self._set((), lambda: f"C:{name}")


class IntVal(Term):
    """An integer expression (sizes, indices) read as a real scalar."""

    @classmethod
    def _canon(cls, poly):
        return (as_poly(poly),)

    def _build(self, p):
        self._set((), lambda: f"I:{p.skey}")


# -- structure ---------------------------------------------------------------------------

class Index(Term):
    """``base[e1, ..., ek]``: the first k axes indexed, each index provably inside its axis;
    with ``total`` an index may fall outside, and then reads 0 (padding, shifts)."""

    @classmethod
    def _canon(cls, base, idx, total=False):
        base = as_term(base)
        idx = tuple([as_poly(e) for e in idx])
        if len(idx) > len(base.shape):
            raise KernelError(f"{len(idx)} indices for the rank-{len(base.shape)} term {base!r}")
        if not total:
            for e, s in zip(idx, base.shape):
                _check_index(e, s, base)
        return base, idx, bool(total)

    def _build(self, base, idx, total):
        self._set(base.shape[len(idx):],
                  lambda: f"X{'t' if total else ''}({base.skey})[{','.join(e.skey for e in idx)}]")


class Lamda(Term):
    """``Lamda[i, j](body)``: the tensor whose ``[i, j]`` entry is ``body``."""

    @classmethod
    def _canon(cls, idxs, body):
        idxs = tuple(idxs)
        if not idxs:
            raise KernelError("Lamda needs at least one index")
        for v in idxs:
            if not isinstance(v, IndexVar):
                raise KernelError(f"Lamda binds {v!r}, which is not an index variable")
        if len(set(idxs)) != len(idxs):
            raise KernelError(f"Lamda binds the same index twice: {idxs}")
        return idxs, as_term(body)

    def _build(self, idxs, body):
        self._set(tuple(v.size for v in idxs) + body.shape, lambda: f"L[{','.join(v.skey for v in idxs)}]({body.skey})")


def _broadcast(args, what):
    shapes = {a.shape for a in args if a.shape != ()}
    if len(shapes) > 1:
        raise KernelError(f"{what} of terms with different shapes "
                          f"{', '.join(_shape_str(s) for s in sorted(shapes, key=str))}: "
                          + ", ".join(repr(a) for a in args))
    return shapes.pop() if shapes else ()


class _Elementwise(Term):
    """Element-wise ``+`` (``Add``) or ``*`` (``Mul``) of terms of one shape (scalars broadcast)."""

    @classmethod
    def _canon(cls, terms):
        terms = tuple([as_term(a) for a in terms])
        if len(terms) < 2:
            raise KernelError(f"{cls.__name__} needs at least two terms")
        return (terms,)

    def _build(self, args):
        tag = "A" if type(self) is Add else "M"
        self._set(_broadcast(args, "sum" if tag == "A" else "product"),
                  lambda: tag + "(" + ",".join(a.skey for a in args) + ")")


class Add(_Elementwise):
    """Element-wise sum."""


class Mul(_Elementwise):
    """Element-wise product."""


class Pow(Term):
    """Element-wise ``base ** exponent`` for a rational exponent."""
    MAX_EXPONENT = 1024

    @classmethod
    def _canon(cls, base, exponent):
        if isinstance(exponent, Num):
            exponent = exponent.value
        if isinstance(exponent, bool) or not isinstance(exponent, (int, Fraction, float)):
            raise KernelError(f"exponent {exponent!r} of {base!r} must be rational")
        if abs(e := Fraction(exponent)) > Pow.MAX_EXPONENT:     # (c ** e exactly would not finish)
            raise KernelError(f"exponent {e} of {base!r} is too large (at most {Pow.MAX_EXPONENT} in magnitude)")
        return as_term(base), e

    def _build(self, base, exponent):
        self._set(base.shape, lambda: f"P({base.skey})^{exponent}")


class _Symbol(_Frozen):
    """A named function symbol, interned by its arguments; immutable."""

    def __new__(cls, name: str, *args):
        if type(name) is not str or not name.isidentifier() or name in ELEMENTARY or not plain(args):
            raise KernelError(f"{name!r}{args!r} cannot name an opaque function")
        return _intern(cls, (name, *args))

    __repr__ = lambda self: self.name  # noqa: E731
    __lt__ = lambda self, other: self.skey < other.skey  # noqa: E731
    sizes: frozenset = frozenset()     # the size symbols of its shapes (a TensorFn's)


class ScalarFn(_Symbol):
    """An opaque differentiable function of ``arity`` reals, declared by the user."""

    def __new__(cls, name: str, arity: int = 1):
        return super().__new__(cls, name, arity)

    def _init(self, name, arity):
        _set(self, name=name, arity=arity, skey=f"F:{name}/{arity}")

    def __call__(self, *args):
        return Func(self, tuple(args))


class Func(Term):
    """Element-wise ``exp log tanh erf sin cos`` or an opaque ``ScalarFn``."""

    @classmethod
    def _canon(cls, fn, operands):
        args = tuple([as_term(a) for a in operands])
        if isinstance(fn, str):
            if fn not in ELEMENTARY:
                raise KernelError(f"unknown function {fn!r} (known: {', '.join(ELEMENTARY)})")
            if len(args) != 1:
                raise KernelError(f"{fn} takes one argument, got {len(args)}")
        elif isinstance(fn, ScalarFn):
            if len(args) != fn.arity:
                raise KernelError(f"{fn.name} takes {fn.arity} arguments, got {len(args)}")
        else:
            raise KernelError(f"{fn!r} is not a function")
        return fn, args

    def _build(self, fn, args):
        name = fn if isinstance(fn, str) else fn.name
        key = fn if isinstance(fn, str) else fn.skey
        self._set(_broadcast(args, f"arguments of {name}"),
                  lambda: f"F{key}(" + ",".join(a.skey for a in args) + ")", fname=name)


class Sum(Term):
    """``Sum[i](body)``: the sum of ``body`` over ``i`` in ``[0, i.size)``."""

    @classmethod
    def _canon(cls, idx, body):
        if not isinstance(idx, IndexVar):
            raise KernelError(f"Sum binds {idx!r}, which is not an index variable")
        return idx, as_term(body)

    def _build(self, idx, body):
        self._set(body.shape, lambda: f"S[{idx.skey}]({body.skey})")


class ReduceMax(Term):
    """``max`` (or ``min``) of ``body`` over ``i`` in ``[0, i.size)``; the range must be
    non-empty. Not differentiable in the kernel: it must cancel before a derivative."""

    @classmethod
    def _canon(cls, idx, body, kind="max"):
        if not isinstance(idx, IndexVar):
            raise KernelError(f"ReduceMax binds {idx!r}, which is not an index variable")
        if kind not in ("max", "min"):
            raise KernelError(f"ReduceMax kind {kind!r} must be 'max' or 'min'")
        body = as_term(body)
        if body.shape != ():
            raise KernelError(f"ReduceMax of the non-scalar {body!r}")
        if not nonneg(idx.size - 1):
            raise KernelError(f"{kind} over {idx.name} < {poly_str(idx.size)}, a range not provably non-empty")
        return idx, body, kind

    def _build(self, idx, body, kind):
        self._set((), lambda: f"R{kind}[{idx.skey}]({body.skey})")


class Delta(Term):
    """Kronecker delta ``[a == b]`` of two integer expressions."""

    @classmethod
    def _canon(cls, a, b):
        return as_poly(a), as_poly(b)

    def _build(self, a, b):
        self._set((), lambda: f"D({a.skey},{b.skey})")


_INT_RELS = ("<", "<=", ">", ">=")


class IntCond(Term):
    """Indicator ``[a rel b]`` of integer expressions, rel one of ``< <= > >=``."""

    @classmethod
    def _canon(cls, a, rel, b):
        if rel not in _INT_RELS:
            raise KernelError(f"unknown relation {rel!r} (known: {' '.join(_INT_RELS)})")
        return as_poly(a), rel, as_poly(b)

    def _build(self, a, rel, b):
        self._set((), lambda: f"C({a.skey}{rel}{b.skey})")


class RealCond(Term):
    """Element-wise indicator ``[t rel 0]`` of a real term, rel one of ``> >= < <=``.
    Its derivative is 0 off the kink ``t == 0``, which every derivative records."""

    @classmethod
    def _canon(cls, t, rel):
        if rel not in _INT_RELS:
            raise KernelError(f"unknown relation {rel!r} (known: {' '.join(_INT_RELS)})")
        return as_term(t), rel

    def _build(self, t, rel):
        self._set(t.shape, lambda: f"Q({t.skey}{rel}0)")


class TensorFn(_Symbol):
    """An opaque differentiable tensor function with declared argument and result
    shapes (a branch of a network whose only known property is its declared VJP)."""

    def __new__(cls, name: str, arg_shapes, out_shape):
        arg_shapes = tuple(tuple(as_poly(s) for s in sh) for sh in arg_shapes)
        out_shape = tuple(as_poly(s) for s in out_shape)
        if any(s.index_atoms() or not nonneg(s - 1) for sh in arg_shapes + (out_shape,) for s in sh):
            raise KernelError(f"tensor function {name}: every size must be a size expression >= 1")
        return super().__new__(cls, name, arg_shapes, out_shape)

    def _init(self, name, arg_shapes, out_shape):
        _set(self, name=name, arg_shapes=arg_shapes, out_shape=out_shape,
             sizes=frozenset().union(*(_size_syms(s) for sh in arg_shapes + (out_shape,) for s in sh)),
             skey=f"T:{name}:" + ";".join(".".join(s.skey for s in sh) for sh in arg_shapes)
             + "->" + ".".join(s.skey for s in out_shape))

    def __call__(self, *args):
        return Apply(self, tuple(args))


class Apply(Term):
    """``f(x1, ..., xk)`` for an opaque ``TensorFn``."""

    @classmethod
    def _canon(cls, fn, operands):
        if not isinstance(fn, TensorFn):
            raise KernelError(f"{fn!r} is not a tensor function")
        args = tuple([as_term(a) for a in operands])
        if len(args) != len(fn.arg_shapes):
            raise KernelError(f"{fn.name} takes {len(fn.arg_shapes)} arguments, got {len(args)}")
        for k, (a, sh) in enumerate(zip(args, fn.arg_shapes)):
            if a.shape != sh:
                raise KernelError(f"argument {k} of {fn.name} has shape {_shape_str(a.shape)}, "
                                  f"expected {_shape_str(sh)}: {a!r}")
        return fn, args

    def _build(self, fn, args):
        self._set(fn.out_shape, lambda: f"Ap{fn.skey}(" + ",".join(a.skey for a in args) + ")")


class Deriv(Term):
    """``d body / d var[idx]``: the partial derivative of a scalar term with respect
    to one entry of a variable."""

    @classmethod
    def _canon(cls, body, var, idx=()):
        body = as_term(body)
        if body.shape != ():
            raise KernelError(f"derivative of the non-scalar {body!r}")
        if not isinstance(var, Var):
            raise KernelError(f"derivative with respect to {var!r}, which is not a variable")
        if "integer" in var.facts:
            raise KernelError(f"derivative with respect to {var.name}, which takes only integer values")
        idx = tuple([as_poly(e) for e in idx])
        if len(idx) != len(var.shape):
            raise KernelError(f"derivative with respect to {var.name} needs {len(var.shape)} indices, got {len(idx)}")
        for e, s in zip(idx, var.shape):
            _check_index(e, s, var.name)
        return body, var, idx

    def _build(self, body, var, idx):
        self._set((), lambda: f"d({body.skey})/d{var.skey}[{','.join(e.skey for e in idx)}]")


class Named(Term):
    """A defined constant: ``name`` displayed, ``body`` meant. Definitions are
    transparent to the decision procedure, so a definition can never be misused."""

    @classmethod
    def _canon(cls, name, body):
        return check_name(name, "definition"), as_term(body)

    def _build(self, name, body):
        self._set(body.shape, lambda: f"Nm:{name}({body.skey})")


class Vjp(Term):
    """``Vjp(f, k, args, cot)[K] = sum_I cot[I] * d f(args)[I] / d args_k[K]``: the
    transpose-Jacobian of an opaque TensorFn ``f`` applied to ``cot`` (its declared VJP)."""

    @classmethod
    def _canon(cls, fn, argno, operands, cot):
        app, cot = Apply(fn, operands), as_term(cot)
        if not (isinstance(argno, int) and 0 <= argno < len(app.operands)):
            raise KernelError(f"{fn.name} has no argument {argno!r}")
        if cot.shape != fn.out_shape:
            raise KernelError(f"cotangent of {fn.name} has shape {_shape_str(cot.shape)}, "
                              f"expected {_shape_str(fn.out_shape)}")
        return fn, argno, app.operands, cot

    def _build(self, fn, argno, args, cot):
        self._set(fn.arg_shapes[argno], lambda: f"Vjp{argno}{fn.skey}(" + ",".join(a.skey for a in args) + f";{cot.skey})")


class At(Term):
    """``body`` at the point ``params := values``, taken *after* the derivatives in
    ``body``: ``At(d F(p)[I] / d p[K], (p,), (v,))`` is the Jacobian of F at v. The
    params are bound in ``body``."""

    @classmethod
    def _canon(cls, body, params, values):
        params, values = tuple(params), tuple(as_term(v) for v in values)
        if len(params) != len(values) or len(set(params)) != len(params):
            raise KernelError("At needs distinct params, one value each")
        for p, v in zip(params, values):
            if not isinstance(p, Var) or p.shape != v.shape:
                raise KernelError(f"At: {p!r} := {v!r} is not a variable and a value of its shape")
        return as_term(body), params, values

    def _build(self, body, params, values):
        self._set(body.shape, lambda: f"At({body.skey}|" + ",".join(f"{p.skey}={v.skey}" for p, v in zip(params, values))
                  + ")", (body.atoms - set(params)).union(*(v.atoms for v in values)))


_fresh_vars = iter(range(1, 1 << 62))


def vjp_statement(forward: Term, var: Var, cotangent: Var):
    """The transpose-Jacobian product of ``forward`` (a term in ``var``) applied to
    ``cotangent`` (a variable of ``forward``'s shape), as a tensor of ``var``'s shape:
    ``Lamda[K]( sum_I cotangent[I] * d forward[I] / d var[K] )``."""
    if cotangent.shape != forward.shape:
        raise KernelError(f"cotangent {cotangent.name} has shape {_shape_str(cotangent.shape)}, "
                          f"the forward has {_shape_str(forward.shape)}")
    taken = set(forward.free_idx)    # the binders may not capture a free index of the forward
    ks = [fresh_name(f"k{j}" if len(var.shape) > 1 else "k", s, taken) for j, s in enumerate(var.shape)]
    is_ = [fresh_name(f"i{j}" if len(forward.shape) > 1 else "i", s, taken) for j, s in enumerate(forward.shape)]
    body = Mul((Index(cotangent, is_) if is_ else cotangent,
                  Deriv(Index(forward, is_) if is_ else forward, var, ks)))
    for i in reversed(is_):
        body = Sum(i, body)
    return Lamda(ks, body) if ks else body


# -- substitution ------------------------------------------------------------------------

def fresh_name(name: str, size, taken: set, tag: str = "") -> IndexVar:
    """The index ``name`` (primed as often as needed) of range ``size`` that is not in
    ``taken``; it is added to ``taken``. Deterministic: the same terms get the same names
    in any process, so a proof can be replayed."""
    from .sizes import _reserved
    while (v := _reserved(name, size, tag)) in taken:
        name += "'"
    taken.add(v)
    return v


def convertible(a: Term, b: Term) -> bool:
    """Whether ``a`` and ``b`` are one term up to conversion: a definition read as its body,
    ``Lamda[i..](body)[e..]`` (not ``total``) read as ``body[i.. := e..]`` (``Lamda[j..](body[i..
    := e..])`` when fewer indices than binders are given), and bound indices renamed.

    Then ``a = b`` holds with no condition: each reading is the meaning of the term read
    (a definition abbreviates its body; a Lamda is the tensor of its entries, and the
    index ``e`` was proved inside the axis when ``Index`` was built, for every value of its
    free indices, so also for the values a reading substitutes, which lie in their
    ranges; a bound index is a name). ``_same`` compares the two terms side by side,
    each under its own substitution of the indices bound above it."""
    try:
        return a is b or _same(a, {}, b, {}, 0, {})
    except (KernelError, RecursionError):     # a reading a constructor refuses, or too deep: no
        return False


def _read(t: Term, env: dict):
    """``t`` with its outermost definitions and Lamda applications read, and the
    substitution ``env`` extended by the indices a reading binds."""
    while True:
        lam = t.base if isinstance(t, Index) and not t.total else None
        while isinstance(lam, Named):
            lam = lam.body
        if isinstance(t, Named):
            t = t.body
        elif isinstance(lam, Lamda) and len(t.idx) <= len(lam.idxs):
            k = len(t.idx)
            env = {**env, **{v: e.subst(env) if env else e for v, e in zip(lam.idxs, t.idx)}}
            t = Lamda(lam.idxs[k:], lam.body) if k < len(lam.idxs) else lam.body
        else:
            return t, env


def _same(a: Term, ea: dict, b: Term, eb: dict, depth: int, memo: dict) -> bool:
    """Whether ``a[ea]`` and ``b[eb]`` are one term up to conversion, where ``ea`` and ``eb``
    map the indices bound above ``a`` and ``b`` (or read away) to integer expressions.
    A pair of binders at depth ``d`` is given one new name on both sides, of tag "c" and
    spelled by ``d`` and position: no public term holds such a name, and the values in
    ``ea`` and ``eb`` hold names of depths below ``d`` only, so none is captured. The
    other arguments must be equal after substitution. A term of a kind other than
    ``Lamda``, ``Sum`` and ``ReduceMax`` that binds an index is never the same as another."""
    from .sizes import _reserved
    a, ea = _read(a, ea)
    b, eb = _read(b, eb)
    if type(a) is not type(b):
        return False
    key = (a, b, depth, frozenset((v, ea[v]) for v in a.free_idx if v in ea),
           frozenset((v, eb[v]) for v in b.free_idx if v in eb))
    if key in memo:
        return memo[key]
    if a is b and key[3] == key[4]:
        return True
    memo[key] = False
    if isinstance(a, (Lamda, Sum, ReduceMax)):
        olds_a, olds_b = (a.idxs, b.idxs) if isinstance(a, Lamda) else ((a.idx,), (b.idx,))
        if len(olds_a) != len(olds_b) or any(x.size is not y.size for x, y in zip(olds_a, olds_b)) \
                or a._args[2:] != b._args[2:]:
            return False
        news = [Poly.sym(_reserved(f"_{depth}_{k}", x.size, "c")) for k, x in enumerate(olds_a)]
        same = _same(a.body, {**ea, **dict(zip(olds_a, news))}, b.body, {**eb, **dict(zip(olds_b, news))},
                     depth + 1, memo)
    else:
        same = len(a._args) == len(b._args) and all(
            _same_arg(x, ea, y, eb, depth, memo) for x, y in zip(a._args, b._args))
    memo[key] = same
    return same


def _same_arg(x, ea: dict, y, eb: dict, depth: int, memo: dict) -> bool:
    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(
            _same_arg(u, ea, v, eb, depth, memo) for u, v in zip(x, y))
    if isinstance(x, Term):
        return isinstance(y, Term) and _same(x, ea, y, eb, depth, memo)
    if isinstance(x, Poly):
        return isinstance(y, Poly) and (x.subst(ea) if ea else x) is (y.subst(eb) if eb else y)
    return not isinstance(x, IndexVar) and type(x) is type(y) and x == y


def _fresh_var(p: Var, shape, taken: set) -> Var:
    """A variable like ``p`` (with ``shape``), primed until it is not in ``taken``."""
    name = p.name
    while (q := Var(name, shape, p.facts)) in taken:
        name += "'"
    taken.add(q)
    return q


class FnLam(_Frozen):
    """``lambda x1..xk: body``: what an opaque TensorFn may be instantiated with. ``cot``
    names the cotangent variable its VJPs are stated with (a fresh one by default).
    Immutable, as a rule reads it more than once."""

    def __init__(self, params, body, cot=None):
        _set(self, params=tuple(params), body=as_term(body))
        for p in self.params:
            if not isinstance(p, Var):
                raise KernelError(f"function parameter {p!r} is not a variable")
        _set(self, cot=cot or Var(f"cot'{next(_fresh_vars)}", self.body.shape))
        if not isinstance(self.cot, Var) or self.cot.shape != self.body.shape or self.cot in self.params \
                or self.cot in self.body.atoms:
            raise KernelError(f"{self.cot!r} cannot be the cotangent variable of a function of shape "
                              f"{_shape_str(self.body.shape)}")


def subst(t: Term, mapping: dict) -> Term:
    """Capture-avoiding simultaneous substitution in a term.

    Keys: ``Var`` -> Term of the same shape (after size substitution), ``SizeSym`` or
    ``IndexVar`` -> Poly, ``TensorFn`` -> ``FnLam``. Bound indices are renamed when a
    substituted value mentions them or their range changes."""
    return substitution(mapping)(t) if mapping else t


def substitution(mapping: dict):
    """``subst`` with ``mapping`` as a function, for several terms that share subterms
    (the sides of a theorem): each shared subterm is substituted once."""
    return _Subst(mapping, {k: as_poly(v) for k, v in mapping.items() if isinstance(k, IntSym)}).go


class _Subst:
    """A substitution with its cache. The substitution made for a binder's body
    (``binder``) differs from its ``parent`` only at the bound index ``own``: a subterm in
    which that index is not free is substituted by the parent (and shares its cache)."""

    def __init__(self, mapping, ints, brings=None, parent=None, own=None):
        self.mapping, self.ints, self.cache, self.parent, self.own = mapping, ints, {}, parent, own
        self.sizes = {k for k in ints if isinstance(k, SizeSym)}
        # A variable mapped to itself changes nothing outside an At (whose params are
        # renamed away from every value's variables).
        self.moving = {k for k, v in mapping.items() if v is not k}
        if brings is None:      # the free indices each substituted symbol's value brings in
            brings = {k: p.index_vars() for k, p in ints.items()}
            for k, v in mapping.items():
                if not isinstance(k, IntSym):
                    brings[k] = v.body.free_idx if isinstance(v, FnLam) else as_term(v).free_idx
        self.brings = brings

    def poly(self, p: Poly) -> Poly:
        return p.subst(self.ints)

    def brought(self, t: Term) -> set:
        """The indices the substitution brings into ``t``: those of the values of the
        symbols free in it."""
        out = set()
        for k in self.ints:         # (over the few keys, not the term's many atoms)
            if k in t.free_idx:
                out |= self.brings[k]
        for k in self.mapping:
            if k in t.atoms:
                out |= self.brings[k]
        return out

    def binder(self, v: IndexVar, t: Term, scope: set):
        """A replacement for the index ``v`` bound by ``t``, and the extended
        substitution. ``v`` is renamed when a value substituted in ``t`` brings in an
        index of that name, or its range changes; the new name avoids those indices and
        ``scope`` (the free indices of ``t`` and its other binders)."""
        size = self.poly(v.size)
        brought = self.brought(t)
        if v in brought or size is not v.size:
            w = fresh_name(v.name, size, brought | scope, v.tag)
            return w, _Subst(self.mapping, {**self.ints, v: Poly.sym(w)}, {**self.brings, v: {w}}, self, v)
        if v in self.ints:  # a bound index shadows a substituted free one of that name
            rest = {k: x for k, x in self.ints.items() if k is not v}
            return v, _Subst(self.mapping, rest, self.brings, self, v)
        return v, self

    def go(self, t: Term) -> Term:
        if t.atoms.isdisjoint(self.mapping if t.has_at else self.moving) and not (self.ints and not (
                t.free_idx.isdisjoint(self.ints) and self.sizes.isdisjoint(t.sizes))):
            return t
        if self.own is not None and self.own not in t.free_idx:
            return self.parent.go(t)
        hit = self.cache.get(t)
        if hit is None:
            hit = self.cache[t] = self._go(t)
        return hit

    def _at(self, t: At) -> Term:
        """Substitute in the values, and in the body with the params bound: a param is
        renamed when a substituted value mentions it or its shape changes."""
        # the indices and sizes are those substituted here: an enclosing binder's renaming
        # included, a free index a binder shadows excluded (self.ints, not the mapping given;
        # the mapping left an enclosing Lamda's renamed index unbound in the body: the soundness
        # fuzz's chain seed 5031320, instantiate n := 2 under Lamda[k<n](At(..k.., p := q[k])))
        inner = {k: v for k, v in self.mapping.items() if k not in t.params and not isinstance(k, IntSym)}
        inner.update(self.ints)
        captured = set()
        for v in inner.values():
            captured |= v.body.atoms if isinstance(v, FnLam) else (as_term(v).atoms if not isinstance(v, Poly) else set())
        # and a free variable reshaped by a size (red team RT6-A2: p_m is p_2 at m := 2, as param p_n became)
        captured |= {w for a in t.body.atoms - set(t.params) if isinstance(a, Var) for w in self.go(a).atoms}
        # (renamed to a variable that is neither brought in by a value nor free in the body)
        taken = captured | (t.body.atoms - set(t.params))
        params = []
        for p in t.params:
            shape = tuple(self.poly(s) for s in p.shape)
            q = _fresh_var(p, shape, taken) if p in captured or shape != p.shape else p
            if q is not p:
                inner[p] = q
            params.append(q)
        return At(subst(t.body, inner), params, [self.go(v) for v in t.values])

    def _go(self, t: Term) -> Term:
        g = self.go
        if isinstance(t, Var) and t in self.mapping:
            new = as_term(self.mapping[t])
            want = tuple(self.poly(s) for s in t.shape)
            if new.shape != want:
                raise KernelError(f"{t.name} of shape {_shape_str(want)} replaced by {new!r} "
                                  f"of shape {_shape_str(new.shape)}")
            return new
        if isinstance(t, Lamda):
            inner, vs = self, []
            for v in t.idxs:
                w, inner = inner.binder(v, t, t.free_idx | set(t.idxs) - {v} | set(vs))
                vs.append(w)
            return Lamda(vs, inner.go(t.body))
        if isinstance(t, (Sum, ReduceMax)):
            w, inner = self.binder(t.idx, t, t.free_idx)
            return type(t)(w, inner.go(t.body), *t._args[2:])
        if isinstance(t, At):
            return self._at(t)
        if isinstance(t, (Apply, Vjp)):
            args = tuple(g(a) for a in t.operands)
            lam = self.mapping.get(t.fn)
            if lam is None:
                fn = t.fn
                if self.sizes:
                    fn = TensorFn(fn.name, [[self.poly(s) for s in sh] for sh in fn.arg_shapes],
                                  [self.poly(s) for s in fn.out_shape])
                return Apply(fn, args) if isinstance(t, Apply) else Vjp(fn, t.argno, args, g(t.cot))
            if len(lam.params) != len(args):
                raise KernelError(f"{t.fn.name} replaced by a function of {len(lam.params)} parameters")
            if isinstance(t, Apply):
                return subst(lam.body, dict(zip(lam.params, args)))
            return At(vjp_statement(lam.body, lam.params[t.argno], lam.cot), lam.params + (lam.cot,),
                      args + (g(t.cot),))
        if isinstance(t, Deriv):
            var = g(t.var)
            if not isinstance(var, Var):
                raise KernelError(f"cannot substitute {var!r} for the variable of a derivative")
            # d body / d x is taken with every other variable held fixed: a substitution
            # may not make the body depend on the differentiated variable in a new way.
            if var is not t.var and var in t.body.atoms:
                raise KernelError(f"substituting {var.name} for {t.var.name} in d(...)/d{t.var.name}: "
                                  f"{var.name} already occurs in the differentiated term")
            for v in t.body.atoms - {t.var}:
                # no other variable's image holds var: a value that mentions it, nor the same name
                # reshaped by a size (red team RT6-A1: x_n is x_2 at n := 2, in d(x_2[0] x_n[0])/dx_2[0])
                val = self.mapping.get(v)
                atoms = g(v).atoms if isinstance(v, Var) else \
                    val.body.atoms - set(val.params) if isinstance(val, FnLam) else ()
                if var in atoms:
                    raise KernelError(f"substituting for {getattr(v, 'name', v)} inside d(...)/d{var.name} "
                                      f"would make it depend on {var.name}")
        return map_args(t, g, self.poly)


def _size_syms(p: Poly) -> frozenset:
    return frozenset([s for s in p.symbols() if isinstance(s, SizeSym)])
