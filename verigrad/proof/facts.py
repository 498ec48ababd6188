"""Facts (untrusted bookkeeping around kernel theorems).

A ``Fact`` is a statement together with how it is known:

- *proved*: ``fact.theorem`` is a kernel ``Theorem`` of exactly the statement's kernel
  equation (``fact.pair``);
- *pending*: not yet known; the goals a theorem's ``apply`` states start so, and so do
  the facts derived from them. A pending fact keeps *derivations*: kernel recipes that
  build its theorem once the facts they need are proved.

Most steps rewrite one side of a fact; old and new are then *equivalent*: each side's
change is a kernel theorem (``L = L'``, ``R = R'``), and the new fact is proved from
the old by ``trans`` and ``symm`` or the old from the new. A goal is proved when some
chain of such derivations reaches it from proved facts. The derivations call only
kernel rules, so a goal's theorem is always the kernel's.

The facts layer sits above tactics: ``fact.this`` is a cursor (``cursor``), where a
tactic's proposal becomes a new fact (``Fact.rewritten``). This module also gives
expressions their ``this`` (``X.this``: a cursor on ``X = X``), which the expression
layer declares but cannot build. The log that numbers facts is ``proof_log``.
"""
from __future__ import annotations

from verigrad.kernel import KernelError, Theorem, abstract, assume, index, refl, rewrite, symm

from . import justification as K
from .cursor import Cursor
from .errors import ProofError
from .expressions import SYNTAX, Expr, Indexed, IntSymbol, Lamda, TensorSymbol, as_expr, push_index, tidy_lamda
from .statements import Equality, Statement
from .tactics import zero_if_zero


class Fact:
    """A statement, its provenance, and (once known) its kernel theorem."""

    def __init__(self, statement: Statement, rule: str, inputs=(), theorem: Theorem | None = None,
                 kind: str = "step"):
        self.statement = statement
        self.rule = rule
        self.inputs = tuple(inputs)
        self.kind = kind
        self.theorem = None
        self.derivations: list = []
        self.dependents: list = []
        self.index = None
        self.name = None
        self.line = None
        self.note = None
        self.quantified = ()
        self._pair = None
        if theorem is not None:
            settle(self, theorem)

    # -- what it states ----------------------------------------------------------------------
    @property
    def pair(self):
        if self._pair is None:
            self._pair = self.statement.pair()
        return self._pair

    @property
    def lhs(self):
        return self.statement.lhs

    @property
    def rhs(self):
        return self.statement.rhs

    @property
    def proved(self) -> bool:
        return self.theorem is not None

    def __str__(self):
        q = ("forall " + ", ".join(s.name for s in self.quantified) + ": ") if self.quantified else ""
        return q + str(self.statement)

    __repr__ = __str__

    # Notebook display (verigrad.report.notebook): the statement as math, with its status.
    def _repr_latex_(self):
        from verigrad.report.notebook import dollars, pair_latex
        return dollars(pair_latex(*self.pair))

    def _repr_html_(self):
        from verigrad.report.notebook import fact_html
        return fact_html(self)

    @property
    def label(self) -> str:
        if self.name is not None:
            return f"Eq.{self.name}"
        return f"Eq[{self.index}]" if self.index is not None else "(unnumbered)"

    @staticmethod
    def reflexive(e: Expr) -> "Fact":
        return Fact(Equality(e, e), "this", theorem=refl(e.term))

    # -- derivations ---------------------------------------------------------------------------
    def derive_from(self, sources, builder):
        """Register a kernel recipe ``builder(*source_theorems) -> theorem``."""
        sources = tuple(sources)
        if self.theorem is not None:
            return
        if all(s.theorem is not None for s in sources):
            try:
                th = builder(*[s.theorem for s in sources])
            except (KernelError, ProofError):
                th = None
            if th is not None:
                settle(self, th)
                return
        self.derivations.append((sources, builder))
        for s in sources:
            if s.theorem is None:
                s.dependents.append(self)

    # -- steps on whole facts --------------------------------------------------------------------
    @property
    def this(self) -> Cursor:
        return Cursor(self, ())

    def rewritten(self, statement: Statement, rule: str, using=None, inputs=()) -> "Fact":
        """The equivalent fact whose sides changed to ``statement``'s (``rewrite_fact``)."""
        return rewrite_fact(self, statement, rule, using=using, inputs=inputs)

    @property
    def reversed(self) -> "Fact":
        st = self._equality("reversed").reversed()
        new = Fact(st, "reversed", (self,))
        new.derive_from([self], symm)
        self.derive_from([new], symm)
        return new

    def subs(self, *eqs) -> "Fact":
        """Replace ``eq.lhs`` by ``eq.rhs`` on both sides, for each proved fact ``eq``."""
        cur = self
        for eq in eqs:
            if isinstance(eq, tuple) and len(eq) == 2 and not isinstance(eq[0], Fact):
                cur = cur._subs_expr(as_expr(eq[0]), as_expr(eq[1]))
            else:
                cur = cur._subs_fact(eq)
        return cur

    def _subs_fact(self, eq: "Fact") -> "Fact":
        if not isinstance(eq, Fact):
            raise ProofError(f"subs expects a fact (an entry of Eq), not {eq!r}")
        old, new = eq.statement.lhs, eq.statement.rhs
        st = _replace_statement(self.statement, old, new)
        if st is None and isinstance(old, Indexed) and _plain_indices(old):
            # an elementwise equation S[i, j] = f(i, j) rewrites S itself
            vars_ = list(old.indices)
            lam = Lamda(new, [(v, v.size) for v in reversed(vars_)])
            st = _replace_statement(self.statement, old.base, lam)
            if st is not None:
                whole = Fact(Equality(old.base, lam), "reference", (eq,))
                L, R = whole.pair
                whole.derive_from([eq], lambda th: K.fit(abstract(th, [v.sym for v in vars_]), L, R, "subs"))
                eq = whole
        if st is None:
            raise ProofError(f"subs: {old} does not occur in {self}")
        return rewrite_fact(self, st, "subs", using=eq, inputs=(eq,))

    def _subs_expr(self, old: Expr, new: Expr) -> "Fact":
        st = _replace_statement(self.statement, old, new)
        if st is None:
            raise ProofError(f"subs: {old} does not occur in {self}")
        return rewrite_fact(self, st, "subs")

    def __getitem__(self, idx) -> "Fact":
        """Index both sides (congruence), pushing the index into each side."""
        st = self._equality("indexing")
        if not isinstance(idx, tuple):
            idx = (idx,)
        lhs = Indexed(st.lhs, *idx)         # resolves and checks the indices
        idx = lhs.indices
        new_st = Equality(push_index(st.lhs, idx), push_index(st.rhs, idx))
        new = Fact(new_st, "index", (self,))
        L, R = new.pair
        polys = [e.poly for e in idx]
        new.derive_from([self], lambda th: K.fit(index(th, polys), L, R, "indexing"))
        L0, R0 = self.pair
        if _plain_indices(lhs) and not any(v.sym in L0.free_idx | R0.free_idx for v in idx):
            # for every value of fresh indices: extensionality gives the whole tensors back
            vs = [v.sym for v in idx]
            self.derive_from([new], lambda th: K.fit(abstract(th, vs), L0, R0, "extensionality"))
        return new

    def reference(self, *limits) -> "Fact":
        """Extensionality: from ``A[i, j] = B[i, j]`` for every i, j infer
        ``Lamda[j, i](A[i, j]) = Lamda[j, i](B[i, j])``, shown without the comprehension
        where it is just a tensor (``U - V``). Limits are listed innermost first."""
        st = self._equality("reference")
        syms = []
        for lim in limits:
            s = lim[0] if isinstance(lim, tuple) else lim
            if not isinstance(s, IntSymbol) or s.kind != "index":
                raise ProofError(f"reference over {s}, which is not an index symbol")
            syms.append(s)
        lims = [(s, s.size) for s in syms]
        outer = [s.sym for s in reversed(syms)]
        new_st = Equality(tidy_lamda(Lamda(st.lhs, lims)), tidy_lamda(Lamda(st.rhs, lims)))
        new = Fact(new_st, "reference", (self,))
        L, R = new.pair
        L0, R0 = self.pair
        new.derive_from([self], lambda th: K.fit(abstract(th, outer), L, R, "reference"))
        self.derive_from([new], lambda th: K.fit(index(th, outer), L0, R0, "reference"))
        return new

    def forall(self, *limits) -> "Fact":
        """The same fact, read for every value of the given index symbols (free index
        symbols of a kernel theorem are already universally quantified)."""
        syms = []
        for lim in limits:
            s = lim[0] if isinstance(lim, tuple) else lim
            if not isinstance(s, IntSymbol):
                raise ProofError(f"forall over {s}, which is not an integer symbol")
            syms.append(s)
        if self.theorem is not None:
            for s in syms:
                for l, r in self.theorem.hyps:
                    if s.sym in l.free_idx or s.sym in r.free_idx:
                        raise ProofError(f"forall over {s.name}, which occurs in a hypothesis")
        new = Fact(self.statement, "forall", (self,))
        new.quantified = tuple(syms)
        new.derive_from([self], lambda th: th)
        self.derive_from([new], lambda th: th)
        return new

    def _combine(self, other, op: str) -> "Fact":
        st = self._equality(op)
        if isinstance(other, Fact):
            o = other._equality(op)
            ol, orr, sources = o.lhs, o.rhs, (self, other)
        else:
            ol = orr = as_expr(other)
            sources = (self,)
        make = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}[op]
        lhs, rhs = make(st.lhs, ol), make(st.rhs, orr)
        rhs = zero_if_zero(rhs)
        new = Fact(Equality(lhs, rhs), {"+": "add", "-": "subtract", "*": "multiply"}[op], sources)
        L, R = new.pair

        def build(*ths):
            cur = refl(L)
            for th in ths:        # replace each fact's left side by its right side
                try:
                    cur = K.chain(cur, rewrite(th, cur.rhs))
                except KernelError:
                    pass
            return K.chain(cur, K.decide(cur.rhs, R, f"{op} of facts"))
        new.derive_from(sources, build)
        return new

    def __sub__(self, other):
        return self._combine(other, "-")

    def __add__(self, other):
        return self._combine(other, "+")

    def __mul__(self, other):
        return self._combine(other, "*")

    __rmul__ = __mul__
    __radd__ = __add__

    def __neg__(self):
        return self._combine(-1, "*")

    def _equality(self, what) -> Equality:
        if not isinstance(self.statement, Equality):
            raise ProofError(f"{what} needs an equation, not {self}")
        return self.statement


def _plain_indices(e: Indexed) -> bool:
    idx = e.indices
    return all(isinstance(v, IntSymbol) and v.kind == "index" for v in idx) and len(set(idx)) == len(idx)


def _replace_statement(st: Statement, old: Expr, new: Expr):
    """The statement with ``old`` replaced on every side, or None if it does not occur."""
    changed = False
    out = st
    for side in st.sides:
        e = st.side(side)
        r = e.replace(old, new)
        if r is not e and r != e:
            out = out.replace_side(side, r)
            changed = True
    return out if changed else None


# -- settling and propagation -----------------------------------------------------------------------

def settle(fact: Fact, th: Theorem):
    """Give ``fact`` its theorem (fitted to its exact kernel equation) and settle every
    pending fact whose derivation now has all it needs."""
    work = [(fact, th)]
    while work:
        f, th = work.pop()
        if f.theorem is not None:
            continue
        L, R = f.pair
        try:
            f.theorem = K.fit(th, L, R, "settling")
        except (KernelError, ProofError):
            continue
        for d in f.dependents:
            if d.theorem is not None:
                continue
            for sources, builder in d.derivations:
                if all(s.theorem is not None for s in sources):
                    try:
                        work.append((d, builder(*[s.theorem for s in sources])))
                        break
                    except (KernelError, ProofError):
                        continue


def rewrite_fact(old: Fact, statement: Statement, rule: str, using=None, inputs=()) -> Fact:
    """A fact equivalent to ``old`` whose sides changed to ``statement``'s; each change
    is proved by the kernel (rewriting with ``using`` where given, then deciding).

    ``using`` is a kernel theorem or a fact. A fact that is not proved yet (a pending
    goal, a citation of an unproved theorem) is assumed to check the step now, and the
    step is derived for real once that fact is proved."""
    Lo, Ro = old.pair
    new = Fact(statement, rule, (old,) + tuple(inputs))
    Ln, Rn = new.pair
    what = f"{rule} ({old.statement} -> {statement})"
    if isinstance(using, Fact) and using.theorem is None:
        hyp = assume(*using.pair)
        K.equate(Lo, Ln, what, hyp), K.equate(Ro, Rn, what, hyp)     # rejected now if wrong

        def sides(th_eq):
            return K.equate(Lo, Ln, what, th_eq), K.equate(Ro, Rn, what, th_eq)
        new.derive_from([old, using], lambda th, th_eq: K.forward(th, *sides(th_eq)))
        old.derive_from([new, using], lambda th, th_eq: K.backward(th, *sides(th_eq)))
        return new
    if isinstance(using, Fact):
        using = using.theorem
    eq_l = K.equate(Lo, Ln, what, using)
    eq_r = K.equate(Ro, Rn, what, using)
    new.derive_from([old], lambda th: K.forward(th, eq_l, eq_r))
    old.derive_from([new], lambda th: K.backward(th, eq_l, eq_r))
    return new


def definition_fact(sym: TensorSymbol, elementwise: bool) -> Fact:
    """``S = definition`` (or ``S[i, j] = body`` for a comprehension, with its indices)."""
    th = sym.definition_theorem
    body = sym.definition
    if elementwise and isinstance(body, Lamda):
        vars_ = list(reversed(body.variables))
        st = Equality(Indexed(sym, *vars_), body.function)
        fact = Fact(st, "definition", kind="definition")
        L, R = fact.pair
        settle(fact, K.fit(index(th, [v.sym for v in vars_]), L, R, "definition"))
        return fact
    return Fact(Equality(sym, body), "definition", theorem=th, kind="definition")


def given_fact(st: Statement) -> Fact:
    """A hypothesis of the theorem: ``L = R |- L = R``."""
    L, R = st.pair()
    return Fact(st, "given", theorem=assume(L, R), kind="given")


def goal_fact(st: Statement) -> Fact:
    return Fact(st, "apply", kind="goal")


# What an expression's ``this`` is: a cursor on ``X = X`` (see ``expressions.node``).
SYNTAX["this"] = lambda e: Fact.reflexive(e).this
