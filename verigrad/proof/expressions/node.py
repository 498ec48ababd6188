"""The expression tree of the proof language (untrusted front end).

A theorem file writes tensor expressions the way a mathematician (or SymPy) does:
``softmax(Q @ K.T / sqrt(d)) @ V``, ``Sum[j:n](alpha[i, j] * V[j])``,
``BlockMatrix([[W, ZeroMatrix(n, 1)], [ZeroMatrix(1, n), 1]])``. Each node keeps that
structure, so proof steps can navigate it (``.args[1]``, ``.function``) and tactics can
rewrite it, and each node *compiles* to a kernel term (``node.term``) that says what
it means. Only compiled terms ever reach the kernel; a wrong compile rule can make a
proof fail or state something unintended, but it cannot make the kernel accept a false
equation. The statement a theorem reports is always the kernel's.

Conventions (SymPy's where it has one):

- ``Lamda[j:n, i:m](f)`` and ``Sum[j:n, i:m](f)`` list limits innermost first, so
  ``Lamda[j:n, i:m](f)[i, j] = f``; ``Sum[j](f)`` takes the range from j's domain.
- Integer symbols with ``domain=[a, b]`` range over the *closed* interval, with
  ``domain=Range(a, b)`` over ``[a, b)``. An index symbol starts at 0; a size symbol
  (upper end ``oo``) is at least 1.
- ``A @ B`` is the matrix (or vector) product; a matrix ``(m, a)`` times a batch of m
  matrices ``(m, a, b)`` multiplies row by row (``(A @ B)[i] = A[i] @ B[i]``), which is
  how ``Q (K + a^K)^T`` is read in the relative-position attention of Shaw et al.
- ``.T`` transposes a matrix, and swaps the last two axes of a rank-3 tensor.
- ``+``, ``*`` are element-wise with NumPy broadcasting (trailing axes aligned).
- ``Min``/``Max`` of integers pick their first argument on ties; an integer
  expression containing them compiles to cases weighted by indicators
  (``a if [a <= b] else b``, the ``else`` weight being ``1 - [a <= b]``).
- A scalar block of a ``BlockMatrix`` sits at one position (a Kronecker delta); a
  tensor block is read with total indexing (zero outside it).
"""
from __future__ import annotations

import itertools
from fractions import Fraction

from verigrad.frontends import ops
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, KernelError, Poly, SizeSym, as_poly, poly_str


class ProofError(Exception):
    """A proof step or a statement is ill-formed or was rejected by the kernel."""


_compiled: dict = {}        # node key -> kernel term


# -- the base class ----------------------------------------------------------------------

class Expr:
    """A node: ``args`` are its children (for navigation), ``shape`` a tuple of size
    polynomials, ``term`` the kernel term it compiles to."""

    is_int = False      # an integer-valued scalar (sizes, indices, their arithmetic)
    rank = 9            # sort rank among the terms of a sum (SymPy-like canonical order)

    def __init__(self, *args):
        self.args = tuple(args)
        self._term = None
        self._key = None

    # -- structure ------------------------------------------------------------------------
    def rebuild(self, args):
        """The same kind of node with other children."""
        return type(self)(*args)

    def _data(self):
        """Non-child data that distinguishes nodes with equal children."""
        return ()

    @property
    def key(self):
        if self._key is None:
            self._key = (type(self).__name__, self._data(), tuple(a.key for a in self.args))
        return self._key

    def __eq__(self, other):
        return isinstance(other, Expr) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    @property
    def func(self):
        return lambda *args: self.rebuild(args)

    def walk(self):
        """Pre-order traversal of the tree."""
        yield self
        for a in self.args:
            yield from a.walk()

    def has(self, *nodes) -> bool:
        return any(n in nodes for n in self.walk())

    def symbol_names(self) -> set:
        """Names of every symbol (integer or tensor, free or bound) in the tree."""
        out = set()
        for n in self.walk():
            if isinstance(n, (IntSymbol, TensorSymbol)):
                out.add(n.name)
            if isinstance(n, Binder):
                out |= {s.name for s in n.variables}
        return out

    def find(self, cls):
        """The first sub-node (pre-order) that is an instance of ``cls`` (or equal to it)."""
        for n in self.walk():
            if (isinstance(cls, type) and isinstance(n, cls)) or n == cls:
                return n
        raise ProofError(f"no {getattr(cls, '__name__', cls)} in {self}")

    def subs(self, old, new=None):
        """Structural substitution ``old -> new`` (also of a run of factors of a product)."""
        if new is None and isinstance(old, (list, tuple, dict)):
            pairs = old.items() if isinstance(old, dict) else old
            out = self
            for o, n in pairs:
                out = out.subs(o, n)
            return out
        return replace(self, as_expr(old), as_expr(new))

    _subs = subs

    # -- compilation ----------------------------------------------------------------------
    @property
    def term(self) -> T.Term:
        """The kernel term this node means. Structurally equal nodes (equal ``key``, which
        covers everything compiling reads) compile to the same term, so it is shared."""
        if self._term is None:
            key = self.key
            t = _compiled.get(key)
            if t is None:
                try:
                    t = _compiled[key] = self._compile()
                except KernelError as e:
                    raise ProofError(f"{self}: {e}") from None
            self._term = t
        return self._term

    def _compile(self) -> T.Term:
        raise ProofError(f"{type(self).__name__} cannot be compiled")

    # -- display ----------------------------------------------------------------------------
    def __str__(self):
        return self._text()[0]

    def __repr__(self):
        return str(self)

    def _text(self):
        return type(self).__name__ + "(" + ", ".join(str(a) for a in self.args) + ")", 100

    def _paren(self, prec):
        s, p = self._text()
        return s if p >= prec else "(" + s + ")"

    # -- operators (SymPy-like) ------------------------------------------------------------
    def __add__(self, o):
        return Add(self, as_expr(o))

    def __radd__(self, o):
        return Add(as_expr(o), self)

    def __sub__(self, o):
        return Add(self, -as_expr(o))

    def __rsub__(self, o):
        return Add(as_expr(o), -self)

    def __neg__(self):
        return Mul(Number(-1), self)

    def __mul__(self, o):
        return Mul(self, as_expr(o))

    def __rmul__(self, o):
        return Mul(as_expr(o), self)

    def __truediv__(self, o):
        return Mul(self, Pow(as_expr(o), -1))

    def __rtruediv__(self, o):
        return Mul(as_expr(o), Pow(self, -1))

    def __pow__(self, e):
        return Pow(self, e)

    def __matmul__(self, o):
        return MatMul(self, as_expr(o))

    def __rmatmul__(self, o):
        return MatMul(as_expr(o), self)

    def __floordiv__(self, o):
        return FloorDiv(self, as_expr(o))

    def __mod__(self, o):
        o = as_expr(o)
        return self - o * FloorDiv(self, o)

    def __lt__(self, o):
        return _relation(self, "<", o)

    def __le__(self, o):
        return _relation(self, "<=", o)

    def __gt__(self, o):
        return _relation(self, ">", o)

    def __ge__(self, o):
        return _relation(self, ">=", o)

    @property
    def T(self):
        return Transpose(self)

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        return Indexed(self, *idx)

    @property
    def this(self):
        """A cursor on ``self = self``: ``X.this.definition`` states ``X = <X unfolded>``."""
        from .cursor import Cursor
        from .facts import Fact
        return Cursor(Fact.reflexive(self), ())

    @property
    def shape(self):
        return self._shape

    def shape_expr(self, k: int) -> "Expr":
        """Axis ``k``'s size as an (integer) expression."""
        return SizeExpr(self.shape[k])

    @property
    def is_scalar(self):
        return self.shape == ()


def _relation(a, op, b):
    from .indicators import Relational
    return Relational(a, op, as_expr(b))


def as_expr(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        raise ProofError(f"{x!r} is not an expression")
    if isinstance(x, (int, Fraction)):
        return Number(x)
    if isinstance(x, float):
        return Number(Fraction(x).limit_denominator(10 ** 12))
    if isinstance(x, Poly):
        return SizeExpr(x)
    raise ProofError(f"{x!r} ({type(x).__name__}) is not an expression")


def _shape_str(shape) -> str:
    return "(" + ", ".join(poly_str(s) for s in shape) + ")"


def as_size(x) -> Poly:
    """A size expression: a polynomial in size symbols."""
    if isinstance(x, Poly):
        return x
    e = as_expr(x)
    if not e.is_int:
        raise ProofError(f"size {e} is not an integer expression")
    if isinstance(e, IntSymbol):
        e.resolve_size()
    for n in e.walk():
        if isinstance(n, IntSymbol) and n.kind is None:
            n.resolve_size()
    cases = e.cases
    if len(cases) != 1 or cases[0][0] is not None:
        raise ProofError(f"size {e} must be a polynomial (no Min/Max)")
    return cases[0][1]


# -- integer expressions: cases -------------------------------------------------------------

def _weight(*ws):
    """The product of case weights (None is 1)."""
    ws = [w for w in ws if w is not None]
    if not ws:
        return None
    return ws[0] if len(ws) == 1 else T.Mul(tuple(ws))


def int_term(cases) -> T.Term:
    """The real term of an integer expression given by cases."""
    parts = []
    for w, p in cases:
        v = T.IntVal(p)
        parts.append(v if w is None else T.Mul((w, v)))
    return parts[0] if len(parts) == 1 else T.Add(tuple(parts))


class IntMixin:
    is_int = True

    @property
    def cases(self):
        """``[(weight, poly)]``: the value is ``poly`` where ``weight`` (a kernel term, or
        None for 1) is 1; the weights are 0/1 indicators summing to 1."""
        c = getattr(self, "_cases", None)
        if c is None:
            try:
                c = self._cases = self._int_cases()
            except KernelError as e:
                raise ProofError(f"{self}: {e}") from None
        return c

    @property
    def poly(self) -> Poly:
        c = self.cases
        if len(c) != 1 or c[0][0] is not None:
            raise ProofError(f"{self} is not a polynomial integer expression")
        return c[0][1]

    def _compile(self):
        return int_term(self.cases)


# -- leaves ---------------------------------------------------------------------------------

class Number(IntMixin, Expr):
    rank = 0

    def __init__(self, value):
        super().__init__()
        v = Fraction(value)
        self.value = v
        self.is_int = v.denominator == 1
        self._shape = ()

    def _data(self):
        return (self.value,)

    def rebuild(self, args):
        return self

    def _int_cases(self):
        if self.value.denominator != 1:
            raise ProofError(f"{self} is not an integer")
        return [(None, Poly.const(int(self.value)))]

    def _compile(self):
        return T.Num(self.value)

    def _text(self):
        v = self.value
        s = str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
        return s, (100 if v >= 0 and v.denominator == 1 else 20)


class Constant(Expr):
    rank = 1

    def __init__(self, name):
        super().__init__()
        self.name = name
        self._shape = ()

    def _data(self):
        return (self.name,)

    def rebuild(self, args):
        return self

    def _compile(self):
        return T.Const(self.name)

    def _text(self):
        return self.name, 100


pi = Constant("pi")


class Infinity:
    """``oo``: the open upper end of a domain."""

    def __repr__(self):
        return "oo"


oo = Infinity()


class IntSymbol(IntMixin, Expr):
    """An integer symbol: a size (``n >= lower``), an index (``0 <= i <= upper``), or not
    yet known (no domain): it becomes a size where it gives a shape and an index where
    it indexes an axis."""
    rank = 1

    def __init__(self, name, lower=None, upper=None, kind=None):
        super().__init__()
        self.name, self.lower, self.upper, self.kind = name, lower, upper, kind
        self._shape = ()
        self._sym = None
        if kind == "size":
            lo = 1 if lower is None else int(as_poly_const(lower))
            if lo < 1:
                raise ProofError(f"size symbol {name} ranges from {lo}; a size is at least 1")
            self._sym = SizeSym(name, lo)
        elif kind == "index":
            lo = 0 if lower is None else lower
            if not (isinstance(lo, int) and lo == 0) and not (isinstance(lo, Expr) and lo == Number(0)):
                raise ProofError(f"index symbol {name}: a domain must start at 0, not {lo}")
            self._sym = IndexVar(name, as_size(upper) + 1)

    @staticmethod
    def bound(name, size: Poly) -> "IntSymbol":
        return IntSymbol.wrap(IndexVar(name, size))

    @staticmethod
    def wrap(var: IndexVar) -> "IntSymbol":
        """The symbol of an existing kernel index variable."""
        s = IntSymbol(var.name)
        s.kind, s._sym = "index", var
        return s

    @property
    def key(self):
        # an unresolved symbol is identified by the object (it may resolve later)
        return ("IntSymbol", self.name, self._sym.skey if self._sym is not None else id(self))

    def rebuild(self, args):
        return self

    def resolve_size(self):
        if self._sym is None:
            self.kind, self._sym = "size", SizeSym(self.name, 1)
        elif self.kind != "size":
            raise ProofError(f"{self.name} is an index; it cannot give a size")
        return self._sym

    def resolve_index(self, size: Poly):
        if self._sym is None:
            self.kind, self._sym = "index", IndexVar(self.name, size)
        return self._sym

    @property
    def sym(self):
        if self._sym is None:
            raise ProofError(f"the integer symbol {self.name} has no domain; give it one, "
                             f"e.g. domain=[0, n - 1]")
        return self._sym

    @property
    def size(self) -> Poly:
        """The number of values of an index symbol."""
        if self.kind != "index":
            raise ProofError(f"{self.name} is not an index symbol")
        return self._sym.size

    def copy(self, domain=None, **kw):
        from .symbols import make_symbol
        return make_symbol(self.name, domain=domain, integer=True, **kw)

    def _int_cases(self):
        return [(None, Poly.sym(self.sym))]

    def _text(self):
        return self.name, 100


def as_poly_const(x) -> int:
    e = as_expr(x)
    p = e.poly
    if not p.is_const():
        raise ProofError(f"{e} must be a constant")
    return p.const_value()


class TensorSymbol(Expr):
    """A real (or complex, see below) tensor symbol, possibly defined by an expression.

    A defined symbol compiles to the kernel's transparent definition
    ``verigrad.kernel.define(name, body)``: the kernel sees through it, so a definition
    can never be misused. ``complex=True`` is accepted for proofs that use only ring
    operations (checked by the proof runner, ``script.check_complex``): a polynomial
    identity that holds over the reals holds over the complex numbers."""
    rank = 1

    def __init__(self, name, shape=(), facts=(), complex=False, definition=None):
        super().__init__()
        self.name, self.facts, self.complex = name, tuple(sorted(facts)), complex
        self.definition = definition
        if definition is not None:
            definition = as_expr(definition)
            self.definition = definition
            if shape and tuple(as_size(s) for s in shape) != definition.shape:
                raise ProofError(f"{name}: shape {_shape_str(tuple(as_size(s) for s in shape))} does not match "
                                 f"its definition's {_shape_str(definition.shape)}")
            self._shape = definition.shape
        else:
            self._shape = tuple(as_size(s) for s in shape)
        self._def_thm = None

    def _data(self):
        return (self.name, tuple(s.skey for s in self._shape), self.facts,
                self.definition.key if self.definition is not None else None)

    def rebuild(self, args):
        return self

    def _compile(self):
        if self.definition is None:
            return T.Var(self.name, self._shape, self.facts)
        self._define()
        return self._term

    def _define(self):
        if self._def_thm is None:
            from verigrad.kernel import define
            try:
                self._term, self._def_thm = define(self.name, self.definition.term)
            except KernelError as e:
                raise ProofError(f"definition of {self.name}: {e}") from None
        return self._def_thm

    @property
    def definition_theorem(self):
        """The kernel's ``|- name = body``."""
        if self.definition is None:
            raise ProofError(f"{self.name} has no definition")
        return self._define()

    def _text(self):
        return self.name, 100


class Raw(Expr):
    """A kernel term used as an expression (results of the kernel's normal form)."""
    rank = 8

    def __init__(self, term):
        super().__init__()
        self._term, self._shape = term, term.shape

    def _data(self):
        return (self._term.skey,)

    def rebuild(self, args):
        return self

    def _text(self):
        return repr(self._term), 50


# -- arithmetic -------------------------------------------------------------------------------

def broadcast(shapes, what):
    """NumPy broadcasting of symbolic shapes (trailing axes aligned, sizes equal or 1)."""
    out: list = []
    for sh in shapes:
        sh = list(sh)
        if len(sh) > len(out):
            out = sh[:len(sh) - len(out)] + out
        for k in range(1, len(sh) + 1):
            a, b = out[-k], sh[-k]
            if a is b or b is Poly.const(1):
                continue
            if a is Poly.const(1):
                out[-k] = b
                continue
            raise ProofError(f"{what}: shapes {', '.join(_shape_str(s) for s in shapes)} do not broadcast")
    return tuple(out)


_names_memo: dict = {}


def index_names(t: T.Term) -> frozenset:
    """Names of the index variables of a term, free or bound (memoized: terms are
    immutable and interned)."""
    hit = _names_memo.get(t)
    if hit is None:
        hit = _names_memo[t] = frozenset(ops.index_names(t))
    return hit


_PREFER = "ijklabcdpqrstuvw"
SPARE_NAMES = tuple(f"{c}{n}" for n in range(1, 100) for c in _PREFER)


def lam(shape, body_fn, *avoid) -> T.Term:
    """``Lamda[i..](body_fn(i..))`` with index names no term of ``avoid`` uses; the body
    must be built from those terms and the new indices only (then nothing is captured)."""
    used = set().union(*[index_names(a) for a in avoid]) if avoid else set()
    vs = _pick(shape, used)
    return T.Lamda(vs, body_fn(*vs))


def sum_over(size, body_fn, *avoid, prefer="jlcpqrst") -> T.Term:
    used = set().union(*[index_names(a) for a in avoid if isinstance(a, T.Term)])
    used |= {v.name for v in avoid if isinstance(v, IndexVar)}
    (v,) = _pick([size], used, prefer)
    return T.Sum(v, body_fn(v))


def _pick(sizes, used, prefer=_PREFER):
    out = []
    used = set(used)
    for s in sizes:
        for ch in itertools.chain(prefer, SPARE_NAMES):
            if ch not in used:
                used.add(ch)
                out.append(IndexVar(ch, as_poly(s)))
                break
    return out


def at(t: T.Term, *idx) -> T.Term:
    """``t[idx]`` as a kernel term: a comprehension is beta-reduced and nested strict
    indexing flattened, so compiled statements read like the mathematics."""
    if isinstance(t, T.Index) and not t.total and not isinstance(t.base, T.Lamda):
        return T.Index(t.base, t.idx + tuple(as_poly(e) for e in idx))
    return ops.at(t, *idx)


def _at_trailing(e: Expr, idx):
    """``e`` indexed by the trailing part of a broadcast index (kernel terms)."""
    k = len(e.shape)
    if k == 0:
        return e.term
    sub = idx[len(idx) - k:]
    return at(e.term, *[Poly.const(0) if e.shape[j] is Poly.const(1) and s is not Poly.const(1) else v
                        for j, (v, s) in enumerate(zip(sub, e.shape))])


def _elementwise(args, kernel_op):
    """Compile an element-wise combination of arguments with broadcasting, as a
    comprehension of entries (so that indexing it later beta-reduces)."""
    out = broadcast([a.shape for a in args], "element-wise operation")
    if not out:
        return kernel_op(tuple(a.term for a in args))
    terms = [a.term for a in args]
    return lam(out, lambda *I: kernel_op(tuple(_at_trailing(a, [Poly.sym(v) for v in I]) for a in args)), *terms)


def _sort_key(e: Expr):
    return (e.rank, len(e.args), str(e))


class Add(IntMixin, Expr):
    rank = 6

    def __new__(cls, *args, order=True):
        flat = []
        for a in args:
            a = as_expr(a)
            flat.extend(a.args if isinstance(a, Add) else [a])
        nums = [a for a in flat if isinstance(a, Number)]
        rest = [a for a in flat if not isinstance(a, Number)]
        c = sum((a.value for a in nums), Fraction(0))
        terms = ([Number(c)] if c != 0 or not rest else []) + rest
        shapes = [t.shape for t in terms]
        if len(terms) == 1:
            return terms[0]
        if order:
            terms = sorted(terms, key=_sort_key)
        self = object.__new__(cls)
        Expr.__init__(self, *terms)
        self.is_int = all(t.is_int for t in terms)
        self._shape = broadcast(shapes, "sum")
        return self

    def __init__(self, *args, order=True):
        pass

    def rebuild(self, args):
        return Add(*args, order=False)

    def _int_cases(self):
        out = [(None, Poly.const(0))]
        for a in self.args:
            out = [(_weight(w1, w2), p1 + p2) for w1, p1 in out for w2, p2 in a.cases]
        return out

    def _compile(self):
        if self.is_int:
            return int_term(self.cases)
        return _elementwise(self.args, T.Add)

    def _text(self):
        out = self.args[0]._paren(10)
        for a in self.args[1:]:
            neg, b = _negated(a)
            out += (" - " + b._paren(11)) if neg else (" + " + a._paren(10))
        return out, 10


def _negated(a):
    if isinstance(a, Number) and a.value < 0:
        return True, Number(-a.value)
    if isinstance(a, Mul) and isinstance(a.args[0], Number) and a.args[0].value < 0:
        c = -a.args[0].value
        rest = a.args[1:]
        if c != 1:
            rest = (Number(c),) + rest
        return True, rest[0] if len(rest) == 1 else Mul(*rest, order=False)
    return False, a


def _mul_group(e: Expr) -> int:
    """Factors of a product are ordered: numbers, then scalars made of sizes and
    constants only, then everything else in the order written (as SymPy does)."""
    if isinstance(e, Number):
        return 0
    if e.shape == () and not any(isinstance(n, (TensorSymbol, Raw)) for n in e.walk()):
        return 1
    return 2


class Mul(IntMixin, Expr):
    rank = 5

    def __new__(cls, *args, order=True):
        flat = []
        for a in args:
            a = as_expr(a)
            flat.extend(a.args if isinstance(a, Mul) else [a])
        c = Fraction(1)
        rest = []
        for a in flat:
            if isinstance(a, Number):
                c *= a.value
            else:
                rest.append(a)
        if c == 0:
            shape = broadcast([a.shape for a in rest], "product") if rest else ()
            return zeros(shape)
        factors = ([Number(c)] if c != 1 or not rest else []) + rest
        if len(factors) == 1:
            return factors[0]
        if order:
            factors = sorted(factors, key=_mul_group)
        self = object.__new__(cls)
        Expr.__init__(self, *factors)
        self.is_int = all(f.is_int for f in factors)
        self._shape = broadcast([f.shape for f in factors], "product")
        return self

    def __init__(self, *args, order=True):
        pass

    def rebuild(self, args):
        return Mul(*args, order=False)

    def _int_cases(self):
        out = [(None, Poly.const(1))]
        for a in self.args:
            out = [(_weight(w1, w2), p1 * p2) for w1, p1 in out for w2, p2 in a.cases]
        return out

    def _compile(self):
        if self.is_int:
            return int_term(self.cases)
        return _elementwise(self.args, T.Mul)

    def _text(self):
        if isinstance(self.args[0], Number) and self.args[0].value == -1:
            rest = self.args[1:]
            inner = rest[0] if len(rest) == 1 else Mul(*rest, order=False)
            return "-" + inner._paren(25), 25
        num = [a for a in self.args if not (isinstance(a, Pow) and a.exponent < 0)]
        den = [Pow(a.base, -a.exponent) if a.exponent != -1 else a.base
               for a in self.args if isinstance(a, Pow) and a.exponent < 0]
        s = "*".join(a._paren(20) for a in num) if num else "1"
        if den:
            d = den[0]._paren(30) if len(den) == 1 else "(" + "*".join(a._paren(20) for a in den) + ")"
            s += "/" + d
        return s, 20


class Pow(Expr):
    rank = 3

    def __init__(self, base, exponent):
        base = as_expr(base)
        if isinstance(exponent, Number):
            exponent = exponent.value
        if isinstance(exponent, float):
            exponent = Fraction(exponent).limit_denominator(10 ** 6)
        if not isinstance(exponent, (int, Fraction)) or isinstance(exponent, bool):
            raise ProofError(f"the exponent of {base} must be a rational number, not {exponent!r}")
        super().__init__(base)
        self.exponent = Fraction(exponent)
        self._shape = base.shape

    @property
    def base(self):
        return self.args[0]

    @property
    def exp(self):
        return Number(self.exponent)

    def _data(self):
        return (self.exponent,)

    def rebuild(self, args):
        return Pow(args[0], self.exponent)

    def _compile(self):
        return T.Pow(self.base.term, self.exponent)

    def _text(self):
        e = self.exponent
        if e == Fraction(1, 2):
            return f"sqrt({self.base})", 100
        if e == -1:
            return "1/" + self.base._paren(30), 20
        if e == Fraction(-1, 2):
            return f"1/sqrt({self.base})", 20
        es = str(e) if e.denominator == 1 and e >= 0 else f"({e})"
        return f"{self.base._paren(31)}**{es}", 30


def sqrt(x):
    return Pow(as_expr(x), Fraction(1, 2))


class FloorDiv(IntMixin, Expr):
    rank = 4

    def __init__(self, a, m):
        super().__init__(as_expr(a), as_expr(m))
        self._shape = ()

    def _int_cases(self):
        m = self.args[1].poly
        return [(w, p // m) for w, p in self.args[0].cases]

    def _text(self):
        return f"{self.args[0]._paren(21)} // {self.args[1]._paren(21)}", 20


# -- matrix products and transposes -------------------------------------------------------------

def _matmul_shape(a, b):
    ra, rb = len(a), len(b)
    if ra == 0 or rb == 0:
        raise ProofError("@ of a scalar: use * instead")
    if ra == 2 and rb == 3:              # row-batched: (m, a) @ (m, a, b) -> (m, b)
        if a[0] is not b[0] or a[1] is not b[1]:
            raise ProofError(f"@ of shapes {_shape_str(a)} and {_shape_str(b)}")
        return (a[0], b[2])
    if ra == 3 and rb == 2:              # batch of matrices times a matrix
        if a[2] is not b[0]:
            raise ProofError(f"@ of shapes {_shape_str(a)} and {_shape_str(b)}")
        return (a[0], a[1], b[1])
    if ra > 2 or rb > 2:
        raise ProofError(f"@ of shapes {_shape_str(a)} and {_shape_str(b)} is not supported")
    if a[-1] is not b[0]:
        raise ProofError(f"@ of shapes {_shape_str(a)} and {_shape_str(b)}: {poly_str(a[-1])} != {poly_str(b[0])}")
    return a[:-1] + b[1:]


def matmul_terms(A: T.Term, B: T.Term) -> T.Term:
    """The kernel term of ``A @ B`` (see ``_matmul_shape`` for the shapes allowed)."""
    ra, rb = len(A.shape), len(B.shape)
    if ra == 2 and rb == 3:
        return lam([A.shape[0]], lambda i: matmul_terms(at(A, i), at(B, i)), A, B)
    if ra == 3 and rb == 2:
        return lam([A.shape[0]], lambda i: matmul_terms(at(A, i), B), A, B)
    n = A.shape[-1]

    def dot(a_idx, b_idx):
        return sum_over(n, lambda j: at(A, *a_idx, j) * at(B, j, *b_idx), A, B, *a_idx, *b_idx)
    if ra == 1 and rb == 1:
        return dot((), ())
    if ra == 1:
        return lam([B.shape[1]], lambda k: dot((), (k,)), A, B)
    if rb == 1:
        return lam([A.shape[0]], lambda i: dot((i,), ()), A, B)
    return lam([A.shape[0], B.shape[1]], lambda i, k: dot((i,), (k,)), A, B)


class MatMul(Expr):
    """``A @ B @ ...``, flattened (associativity is a theorem, ``flat=False`` keeps the
    grouping as written)."""
    rank = 7

    def __new__(cls, *args, flat=True):
        flat_args = []
        for a in args:
            a = as_expr(a)
            flat_args.extend(a.args if isinstance(a, MatMul) and flat else [a])
        flat = flat_args
        if len(flat) == 1:
            return flat[0]
        self = object.__new__(cls)
        Expr.__init__(self, *flat)
        shape = flat[0].shape
        for b in flat[1:]:
            shape = _matmul_shape(shape, b.shape)
        self._shape = shape
        return self

    def __init__(self, *args, flat=True):
        pass

    def rebuild(self, args):
        return MatMul(*args, flat=False)

    def _compile(self):
        t = self.args[0].term
        for b in self.args[1:]:
            t = matmul_terms(t, b.term)
        return t

    def _text(self):
        # below * and / : Python reads ``a * b @ c`` as ``(a * b) @ c``, so a product inside
        # a product of another kind is parenthesized
        return " @ ".join(a._paren(21) for a in self.args), 19


class Transpose(Expr):
    rank = 2

    def __init__(self, x):
        x = as_expr(x)
        super().__init__(x)
        s = x.shape
        if len(s) == 2:
            self._shape = (s[1], s[0])
        elif len(s) == 3:
            self._shape = (s[0], s[2], s[1])
        elif len(s) <= 1:
            self._shape = s
        else:
            raise ProofError(f".T of a rank-{len(s)} tensor")

    @property
    def arg(self):
        return self.args[0]

    def _compile(self):
        x = self.arg.term
        if len(x.shape) <= 1:
            return x
        if len(x.shape) == 2:
            return lam(self._shape, lambda i, j: at(x, j, i), x)
        return lam(self._shape, lambda b, i, j: at(x, b, j, i), x)

    def _text(self):
        return f"{self.arg._paren(100)}.T", 100


# -- indexing ----------------------------------------------------------------------------------

class Slice(Expr):
    """``start:stop`` inside an index (``X[:, j]``, ``X[a:b]``)."""

    def __init__(self, start, stop):
        super().__init__(as_expr(start), as_expr(stop))
        self._shape = ()

    def _text(self):
        a, b = self.args
        return ("" if a == Number(0) else str(a)) + ":" + str(b), 100


def _resolve_indices(base_shape, idx):
    out = []
    for k, e in enumerate(idx):
        if isinstance(e, slice):
            if e.step is not None:
                raise ProofError("slices with a step are not supported")
            start = as_expr(0 if e.start is None else e.start)
            stop = SizeExpr(base_shape[k]) if e.stop is None else as_expr(e.stop)
            out.append(Slice(start, stop))
            continue
        e = as_expr(e)
        if not e.is_int:
            raise ProofError(f"index {e} is not an integer expression")
        if isinstance(e, IntSymbol) and e.kind is None:
            e.resolve_index(base_shape[k])
        out.append(e)
    return tuple(out)


class SizeExpr(IntMixin, Expr):
    """A size polynomial as an expression (the end of a full slice)."""
    rank = 1

    def __init__(self, p):
        super().__init__()
        self.p = as_poly(p)
        self._shape = ()

    def _data(self):
        return (self.p.skey,)

    def rebuild(self, args):
        return self

    def _int_cases(self):
        return [(None, self.p)]

    def _text(self):
        return poly_str(self.p), 100


class Indexed(Expr):
    """``base[i, j]``: strict indexing (each index provably inside its axis)."""
    rank = 2

    def __init__(self, base, *idx, total=False):
        base = as_expr(base)
        if len(idx) > len(base.shape):
            raise ProofError(f"{len(idx)} indices for {base} of shape {_shape_str(base.shape)}")
        idx = _resolve_indices(base.shape, idx)
        super().__init__(base, *idx)
        self.total = total
        shape = []
        for k, e in enumerate(idx):
            if isinstance(e, Slice):
                shape.append(e.args[1].poly - e.args[0].poly)
        self._shape = tuple(shape) + base.shape[len(idx):]

    @property
    def base(self):
        return self.args[0]

    @property
    def indices(self):
        return self.args[1:]

    def _data(self):
        return (self.total,)

    def rebuild(self, args):
        return Indexed(args[0], *args[1:], total=self.total)

    def __getitem__(self, more):
        if not isinstance(more, tuple):
            more = (more,)
        if any(isinstance(e, Slice) for e in self.indices):
            return Indexed(self, *more)
        return Indexed(self.base, *self.indices, *more, total=self.total)

    def _compile(self):
        base = self.base.term
        slices = [(k, e) for k, e in enumerate(self.indices) if isinstance(e, Slice)]
        if slices:
            sizes = [e.args[1].poly - e.args[0].poly for _, e in slices]

            def body(*vs):
                idx, it = [], iter(vs)
                for e in self.indices:
                    idx.append(e.args[0].poly + Poly.sym(next(it)) if isinstance(e, Slice) else e)
                return index_term(base, idx, self.total)
            return lam(sizes, body, base, *[e.term for e in self.indices if not isinstance(e, Slice)])
        return index_term(base, list(self.indices), self.total)

    def _text(self):
        return f"{self.base._paren(100)}[{', '.join(str(e) for e in self.indices)}]", 100


def index_term(base: T.Term, idx, total=False) -> T.Term:
    """``base[idx]`` as a kernel term; indices with Min/Max become weighted cases."""
    combos = [(None, [])]
    for e in idx:
        cs = e.cases if isinstance(e, Expr) else [(None, as_poly(e))]
        combos = [(_weight(w1, w2), ps + [p]) for w1, ps in combos for w2, p in cs]
    if len(combos) == 1 and combos[0][0] is None and not total:
        ps = combos[0][1]
        try:
            return at(base, *ps)
        except KernelError as e:
            raise ProofError(f"{e}") from None
    parts = []
    for w, ps in combos:
        t = T.Index(base, tuple(ps), total=True)
        parts.append(t if w is None else T.Mul((w, t)))
    return parts[0] if len(parts) == 1 else T.Add(tuple(parts))


# -- binders ----------------------------------------------------------------------------------

class Binder(Expr):
    """Common part of ``Lamda`` and ``Sum``: a body and limits (innermost first), each
    ``(symbol, size)``; the symbols are bound index symbols."""

    def __init__(self, body, limits):
        body = as_expr(body)
        lims = []
        for sym, size in limits:
            lims.append((sym, as_poly(size)))
        super().__init__(body)
        self.limits = tuple(lims)

    @property
    def function(self):
        return self.args[0]

    expr = function

    @property
    def variables(self):
        return tuple(s for s, _ in self.limits)

    def _data(self):
        return tuple((s.key, n.skey) for s, n in self.limits)

    def rebuild(self, args):
        return type(self)(args[0], self.limits)

    def _lim_text(self):
        return ", ".join(f"{s.name}:{poly_str(n)}" for s, n in self.limits)

    def bind(self):
        """``(kernel index vars outer-first, body)`` for compiling; a bound index is
        renamed where another index of the body has its name (display only: the kernel
        tells them apart anyway)."""
        vs, body = [s.sym for s, _ in reversed(self.limits)], self.function.term
        if not (index_names(body) & {v.name for v in vs}):
            return vs, body
        clash = _index_vars_by_name(body)
        out = []
        for v in vs:
            if any(w is not v for w in clash.get(v.name, ())):
                taken = set(clash) | {u.name for u in out}
                name = next(c for c in [v.name + "'", v.name + "''"] + [f"{v.name}{k}" for k in range(1, 99)]
                            if c not in taken)
                w = IndexVar(name, v.size)
                body = T.subst(body, {v: Poly.sym(w)})
                v = w
            out.append(v)
        return out, body


def _index_vars_by_name(t: T.Term) -> dict:
    """Every index variable of a term (free or bound), by name."""
    out: dict = {}
    seen, stack = set(), [t]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, IndexVar):
            out.setdefault(x.name, set()).add(x)
        elif isinstance(x, Poly):
            for v in x.index_vars():
                out.setdefault(v.name, set()).add(v)
        elif isinstance(x, T.Term):
            stack.extend(x._args)
        elif isinstance(x, tuple):
            stack.extend(x)
    return out


class _BinderSyntax:
    """``Lamda[j:n, i:m](body)`` / ``Sum[j:n](body)`` / ``Sum[j](body)``."""

    def __init__(self, cls, limits):
        self.cls, self.limits = cls, limits

    def __call__(self, body):
        return self.cls.make(body, self.limits)


def _limits(spec):
    if not isinstance(spec, tuple):
        spec = (spec,)
    out = []
    for s in spec:
        if isinstance(s, slice):
            sym, lo, hi = s.start, s.stop, s.step
            if hi is not None:          # j:a:b
                lo, hi = lo, hi
            else:
                lo, hi = 0, lo
            if not (isinstance(lo, int) and lo == 0) and as_expr(lo) != Number(0):
                raise ProofError(f"a limit {sym.name}:{lo}:{hi} must start at 0")
            out.append((sym, as_size(hi)))
        elif isinstance(s, IntSymbol):
            if s.kind != "index":
                raise ProofError(f"{s.name} has no range; write {s.name}:n")
            out.append((s, s.size))
        else:
            raise ProofError(f"bad limit {s!r}")
    return out


def _bind_symbols(body, limits):
    """Make each limit's symbol an index of exactly that range (a copy if the given
    symbol has another domain, substituted in the body)."""
    out = []
    body = as_expr(body)
    for sym, size in limits:
        if not isinstance(sym, IntSymbol):
            raise ProofError(f"{sym!r} cannot be bound (not an integer symbol)")
        if sym.kind == "index" and sym.size is size:
            out.append((sym, size))
            continue
        b = IntSymbol.bound(sym.name, size)
        body = body.subs(sym, b)
        out.append((b, size))
    return body, out


class Lamda(Binder):
    rank = 8

    def __class_getitem__(cls, spec):
        return _BinderSyntax(cls, _limits(spec))

    @classmethod
    def make(cls, body, limits):
        body, lims = _bind_symbols(body, limits)
        return cls(body, lims)

    def __init__(self, body, limits):
        super().__init__(body, limits)
        self._shape = tuple(n for _, n in reversed(self.limits)) + self.function.shape

    def _compile(self):
        vs, body = self.bind()
        return T.Lamda(vs, body)

    def _text(self):
        return f"Lamda[{self._lim_text()}]({self.function})", 100


class Sum(Binder):
    rank = 7

    def __class_getitem__(cls, spec):
        return _BinderSyntax(cls, _limits(spec))

    @classmethod
    def make(cls, body, limits):
        body, lims = _bind_symbols(body, limits)
        return cls(body, lims)

    def __init__(self, body, limits):
        super().__init__(body, limits)
        self._shape = self.function.shape

    def _compile(self):
        vs, body = self.bind()
        for v in reversed(vs):
            body = T.Sum(v, body)
        return body

    def _text(self):
        return f"Sum[{self._lim_text()}]({self.function})", 100


class ReduceMax(Binder):
    """``ReduceMax[j:n](f)``: the largest value of ``f`` over ``j`` (a scalar). The kernel
    cannot differentiate it; it must cancel (as the row max of a stable softmax does)."""
    rank = 7

    def __class_getitem__(cls, spec):
        return _BinderSyntax(cls, _limits(spec))

    @classmethod
    def make(cls, body, limits):
        body, lims = _bind_symbols(body, limits)
        return cls(body, lims)

    def __init__(self, body, limits):
        super().__init__(body, limits)
        if len(self.limits) != 1 or self.function.shape != ():
            raise ProofError("ReduceMax takes one limit and a scalar body")
        self._shape = ()

    def _compile(self):
        vs, body = self.bind()
        return T.ReduceMax(vs[0], body, "max")

    def _text(self):
        return f"ReduceMax[{self._lim_text()}]({self.function})", 100


# -- zero and one tensors ------------------------------------------------------------------------

class ZeroMatrix(Expr):
    rank = 1

    def __init__(self, *shape):
        super().__init__()
        self._shape = tuple(as_size(s) for s in shape)

    def _data(self):
        return tuple(s.skey for s in self._shape)

    def rebuild(self, args):
        return self

    def _compile(self):
        if not self._shape:
            return T.Num(0)
        return lam(self._shape, lambda *I: T.Num(0))

    def _text(self):
        if not self._shape:
            return "0", 100
        return f"ZeroMatrix({', '.join(poly_str(s) for s in self._shape)})", 100


def zeros(shape):
    return ZeroMatrix(*shape) if shape else Number(0)


class OneMatrix(ZeroMatrix):
    def _compile(self):
        return lam(self._shape, lambda *I: T.Num(1)) if self._shape else T.Num(1)

    def _text(self):
        return f"OneMatrix({', '.join(poly_str(s) for s in self._shape)})", 100


# -- structural replacement -------------------------------------------------------------------

def replace(e: Expr, old: Expr, new: Expr) -> Expr:
    """``e`` with every occurrence of ``old`` replaced by ``new``; a product (sum) pattern
    also matches a contiguous run of factors (a sub-multiset of terms)."""
    if e == old:
        return new
    if isinstance(old, MatMul) and isinstance(e, MatMul):
        n = len(old.args)
        args = list(e.args)
        for s in range(len(args) - n + 1):
            if all(a == b for a, b in zip(args[s:s + n], old.args)):
                return replace(MatMul(*args[:s], new, *args[s + n:]), old, new)
    if isinstance(old, (Add, Mul)) and type(e) is type(old) and len(old.args) < len(e.args):
        rest = list(e.args)
        for a in old.args:
            if a in rest:
                rest.remove(a)
            else:
                break
        else:
            return type(e)(new, *[replace(a, old, new) for a in rest])
    if not e.args:
        return e
    if isinstance(e, Binder) and any(s == old for s in e.variables):
        return e        # a bound symbol is not the free one of that name
    new_args = [replace(a, old, new) for a in e.args]
    if all(a is b for a, b in zip(new_args, e.args)):
        return e
    return e.rebuild(new_args)
