"""Theorem files: ``@apply`` states, ``@prove`` derives; running a proof; citations.

A theorem file is a module::

    from verigrad.proof import *

    @apply
    def apply(n):                       # the statement, for given sizes / symbols
        x = Symbol.x(shape=(n,), real=True)
        return Equality(Sum[j:n](softmax(x)[j]), 1)

    @prove
    def prove(Eq):                      # its proof: every step is checked by the kernel
        n = Symbol.n(domain=[1, oo], integer=True)
        Eq << apply(n)
        ...

Inside its own proof, ``apply(...)`` pushes the definitions its statement uses and the
goals; anywhere else ``module.apply(...)`` *cites* the theorem: the kernel theorem of the
cited proof is instantiated at the given arguments (``verigrad.kernel.instantiate``).

Status: *proved* (every goal has a kernel theorem resting on no hypothesis but the
theorem's own givens), *plausible* (the script ran but a goal was not reached; citing
a theorem that is not proved, or a citation cycle, also leaves the citer here), or
*failed* (a step was rejected or the script raised an error).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass, field

from verigrad.kernel import KernelError, Theorem, instantiate, symm
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly, SizeSym

from . import kernel_glue as K
from .expr import Equality, Expr, IntSymbol, ProofError, SizeExpr, Statement, TensorSymbol, as_expr, as_size
from .facts import Fact, ProofLog, definition_fact, given_fact, goal_fact, settle

PROVED, PLAUSIBLE, FAILED = "proved", "plausible", "failed"


# -- decorators -----------------------------------------------------------------------------

class TheoremStatement:
    """A theorem's ``apply``: in its own proof it states the goals; elsewhere it cites."""

    def __init__(self, fn):
        self.fn = fn
        self.module = fn.__module__
        self.__doc__ = fn.__doc__

    def statements(self, *args, **kw) -> list:
        out = self.fn(*args, **kw)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        for s in out:
            if not isinstance(s, Statement):
                raise ProofError(f"apply of {self.module} returned {s!r}, not a statement "
                                 f"(Equality(...) or Contains(...))")
        return out

    def __call__(self, *args, **kw):
        ctx = current()
        if ctx is not None and ctx.module == self.module:
            if ctx.generic_args is not None:
                raise ProofError("apply(...) is called twice in its own proof")
            sts = self.statements(*args, **kw)
            ctx.generic_args, ctx.goal_statements = args, sts
            givens = [a for a in args if isinstance(a, Statement)]
            return ApplyResult(sts, givens)
        return cite(self, args, kw)

    def __repr__(self):
        return f"<theorem {self.module}>"


def apply(fn):
    """Decorator: the theorem's statement."""
    return TheoremStatement(fn)


def prove(fn):
    """Decorator: the theorem's proof, ``prove(Eq)``."""
    fn.__verigrad_proof__ = True
    return fn


class ApplyResult:
    """What ``Eq << apply(...)`` pushes: the definitions the statement uses (each after
    those it depends on), the givens, then the goals."""

    def __init__(self, statements, givens):
        self.statements, self.givens = statements, givens

    def facts(self):
        out, seen = [], set()

        def visit(e: Expr):
            for n in e.walk():
                if isinstance(n, TensorSymbol) and n.definition is not None and id(n) not in seen:
                    seen.add(id(n))
                    visit(n.definition)
                    out.append(definition_fact(n, elementwise=True))
        for st in self.givens + self.statements:
            for side in st.sides:
                visit(st.side(side))
        out += [given_fact(g) for g in self.givens]
        out += [goal_fact(s) for s in self.statements]
        return out


# -- the proof context -----------------------------------------------------------------------

@dataclass
class Context:
    module: str
    log: ProofLog
    generic_args: tuple | None = None
    goal_statements: list | None = None
    cites: list = field(default_factory=list)
    capped: list = field(default_factory=list)


_stack: list = []


def current() -> Context | None:
    return _stack[-1] if _stack else None


# -- results ------------------------------------------------------------------------------------

@dataclass
class ProofResult:
    """A proof run (live objects: kernel theorems, facts, the log)."""
    module: str
    file: str
    status: str
    reason: str = ""
    line: int | None = None
    log: ProofLog | None = None
    goals: list = field(default_factory=list)
    theorems: list = field(default_factory=list)
    generic_args: tuple | None = None
    goal_statements: list | None = None
    cites: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def axioms(self) -> list:
        out = set()
        for th in self.theorems:
            out |= set(th.axioms())
        return sorted(out)

    @property
    def conditions(self) -> list:
        out = set()
        for th in self.theorems:
            out |= {str(c) for c in th.conds}
        return sorted(out)


_results: dict = {}
_running: set = set()


def forget():
    """Drop this process's memo of proof results (tests, benchmarks)."""
    _results.clear()


def run_proof(module: str) -> ProofResult:
    """Run a theorem module's proof (memoized per process)."""
    hit = _results.get(module)
    if hit is not None:
        return hit
    if module in _running:
        return ProofResult(module, "", PLAUSIBLE, reason=f"citation cycle through {module}")
    _running.add(module)
    t0 = time.perf_counter()
    try:
        res = _run(module)
    finally:
        _running.discard(module)
    res.seconds = time.perf_counter() - t0
    _results[module] = res
    return res


FILES: dict = {}     # module name -> path, for theorem files outside any package


def _import(module: str):
    path = FILES.get(module)
    if path is None:
        return importlib.import_module(module)
    if module in sys.modules:
        return sys.modules[module]
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[module]
        raise
    return mod


def _run(module: str) -> ProofResult:
    try:
        mod = _import(module)
    except Exception as e:
        return ProofResult(module, "", FAILED, reason=f"cannot import: {type(e).__name__}: {e}",
                           line=_line_of(e, None))
    file = getattr(mod, "__file__", "") or ""
    stmt, proof = getattr(mod, "apply", None), getattr(mod, "prove", None)
    if not isinstance(stmt, TheoremStatement) or not callable(proof) or not getattr(proof, "__verigrad_proof__", 0):
        return ProofResult(module, file, FAILED, reason="a theorem file needs `@apply def apply(...)` and "
                                                        "`@prove def prove(Eq)`")
    log = ProofLog(owner=module)
    ctx = Context(module, log)
    _stack.append(ctx)
    res = ProofResult(module, file, FAILED, log=log, cites=ctx.cites)
    try:
        proof(log)
        res.generic_args, res.goal_statements = ctx.generic_args, ctx.goal_statements
        _conclude(res, ctx)
    except (ProofError, KernelError) as e:
        res.status, res.reason, res.line = FAILED, str(e), _line_of(e, file)
    except RecursionError as e:
        res.status, res.reason, res.line = FAILED, f"RecursionError: {e}", _line_of(e, file)
    except Exception as e:           # an error in the proof script itself
        res.status, res.reason, res.line = FAILED, f"{type(e).__name__}: {e}", _line_of(e, file)
    finally:
        _stack.pop()
    res.goals = list(log.goals)
    return res


def _line_of(exc, file) -> int | None:
    line = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if file and fr.filename == file:
            line = fr.lineno
    return line


def _conclude(res: ProofResult, ctx: Context):
    log = ctx.log
    if not log.goals:
        raise ProofError("the proof never pushed its statement (Eq << apply(...))")
    close_goals(log)
    allowed = set()
    for g in log.givens:
        allowed |= g.theorem.hyps
    missing = []
    for g in log.goals:
        th = g.theorem
        if th is None:
            missing.append(f"{g.label} ({g}) was not reached")
        elif not th.hyps <= allowed:
            extra = "; ".join(f"{l!r} = {r!r}" for l, r in th.hyps - allowed)
            missing.append(f"{g.label} rests on the hypothesis {extra}")
        else:
            res.theorems.append(th)
    for c in ctx.capped:
        missing.append(c)
    if not missing and _has_complex(log):
        for th in res.theorems:
            why = ring_only(th)
            if why:
                missing.append(f"complex symbols: {why}; a proof over C must use only ring operations")
                break
    if missing:
        res.status, res.reason = PLAUSIBLE, "; ".join(missing)
        res.theorems = [g.theorem for g in log.goals if g.theorem is not None]
    else:
        res.status = PROVED


# -- closing goals ------------------------------------------------------------------------------

def _sources(goal: Fact) -> list:
    """Every fact from which ``goal`` can be derived (through registered derivations)."""
    seen, out, stack = {id(goal)}, [goal], [goal]
    while stack:
        f = stack.pop()
        for sources, _ in f.derivations:
            for s in sources:
                if id(s) not in seen:
                    seen.add(id(s))
                    out.append(s)
                    stack.append(s)
    return out


def _link(c: Fact, p: Fact) -> Theorem | None:
    """``c``'s theorem from proved ``p`` when they share a side (kernel-identical)."""
    Lc, Rc = c.pair
    Lp, Rp = p.pair
    try:
        if Lc is Lp or Rc is Rp:
            return K.chain(K.decide(Lc, Lp, "closing"), p.theorem, K.decide(Rp, Rc, "closing"))
        if Lc is Rp or Rc is Lp:
            return K.chain(K.decide(Lc, Rp, "closing"), symm(p.theorem), K.decide(Lp, Rc, "closing"))
    except (ProofError, KernelError):
        return None
    return None


def close_goals(log: ProofLog, limit: int = 40):
    """Connect the goals to proved facts: a pending fact equivalent to a goal is proved
    when a proved fact shares a side with it and the kernel decides the other sides
    equal; the last entry is decided outright; or a goal follows from the last entry
    by difference (``a - b`` and ``p - q`` with one normal form). All kernel rules."""
    entries = log.entries
    last = entries[-1] if entries else None
    if last is not None and not last.proved and len(log) and log[-1] is last:
        try:
            L, R = last.pair
            settle(last, K.decide(L, R, "the last step"))
        except (ProofError, KernelError):
            pass
    proved = [f for f in reversed(entries) if f.proved][:limit]
    for g in log.goals:
        if g.proved:
            continue
        cands = [c for c in _sources(g) if not c.proved]
        cands.sort(key=lambda f: -(f.index if f.index is not None else -1))
        for c in cands:
            for p in proved:
                th = _link(c, p)
                if th is not None:
                    settle(c, th)
                    break
            if g.proved:
                break
        if g.proved or last is None or not last.proved or not isinstance(g.statement, Equality):
            continue
        for c in cands:
            if c.proved or not isinstance(c.statement, Equality):
                continue
            try:
                settle(c, K.by_difference(*c.pair, last.theorem, "closing"))
            except (ProofError, KernelError):
                continue
            if g.proved:
                break


# -- complex symbols ---------------------------------------------------------------------------

RING_AXIOMS = frozenset({"ring", "pow_expand", "pow_mul", "pow_add_int", "indicator_idempotent", "delta_decide",
                         "delta_subst", "delta_elim", "sum_linear", "sum_const", "sum_pull", "sum_split", "fubini",
                         "definition", "extensionality", "congruence"})


def _has_complex(log: ProofLog) -> bool:
    for f in log.entries:
        st = f.statement
        for side in st.sides:
            for n in st.side(side).walk():
                if isinstance(n, TensorSymbol) and n.complex:
                    return True
    return False


_NOT_RING = tuple(getattr(T, n) for n in ("Func", "RealCond", "ReduceMax", "Deriv", "Apply", "Jacobian", "Vjp",
                                            "At", "Const") if hasattr(T, n))


def _ring_term(t: T.Term) -> str:
    """'' if ``t`` uses only ring operations (and index arithmetic), else what it uses."""
    stack, seen = [t], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, T.Pow):
            e = x.exponent
            if e.denominator != 1 or e < 0:
                return f"the power {x!r}"
        elif isinstance(x, _NOT_RING):
            return f"{type(x).__name__} in {x!r}"
        for a in x._args:
            if isinstance(a, T.Term):
                stack.append(a)
            elif isinstance(a, tuple):
                stack.extend(b for b in a if isinstance(b, T.Term))
    return ""


def ring_only(th: Theorem) -> str:
    """Why the derivation of ``th`` is not valid over the complex numbers ('' if it is):
    every rule it rests on must be a ring law (or index bookkeeping), and every term in
    it must use only ring operations. A polynomial identity true over R is true over C."""
    seen, stack = set(), [th]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        bad = set(x.used) - RING_AXIOMS
        if bad:
            return f"the rule(s) {', '.join(sorted(bad))}"
        for t in (x.lhs, x.rhs):
            why = _ring_term(t)
            if why:
                return why
        stack.extend(x.parents)
    return ""


# -- citations -------------------------------------------------------------------------------

def _unify(generic, caller, mapping, what):
    """Bind the cited theorem's symbols (sizes, tensor variables) to the caller's."""
    for g, c in zip(generic, caller):
        if isinstance(g, IntSymbol) and g.kind == "size":
            _bind_size(mapping, Poly.sym(g.sym), as_size(c), what)
    for g, c in zip(generic, caller):
        if isinstance(g, IntSymbol) and g.kind == "size":
            continue
        if isinstance(g, IntSymbol):
            p = as_expr(c).poly
            if p is not Poly.sym(g.sym):
                mapping[g.sym] = p       # the kernel checks p is inside the index's range
            continue
        if isinstance(g, TensorSymbol):
            c = as_expr(c)
            if g.definition is not None:
                raise ProofError(f"{what}: the argument {g.name} is a definition")
            if len(g.shape) != len(c.shape):
                raise ProofError(f"{what}: {c} has rank {len(c.shape)}, {g.name} rank {len(g.shape)}")
            for gs, cs in zip(g.shape, c.shape):
                _bind_size(mapping, gs, cs, what)
            if g.term is not c.term:
                mapping[g.term] = c.term
        elif isinstance(g, Statement):
            st = c.statement if isinstance(c, Fact) else c
            if not isinstance(st, Statement):
                raise ProofError(f"{what}: the hypothesis {g} needs a fact or a statement, not {c!r}")
            pattern = {id(n): n for side in g.sides for n in g.side(side).walk()
                       if isinstance(n, TensorSymbol) and n.definition is None}
            binds: dict = {}
            for side in g.sides:
                if side not in st.sides or not _match(g.side(side), st.side(side), pattern, binds):
                    raise ProofError(f"{what}: {st} does not match the hypothesis {g}")
            syms = [pattern[k] for k in binds]
            _unify(syms, [binds[id(x)] for x in syms], mapping, what)
        elif g is not c and g != c:
            raise ProofError(f"{what}: the argument {c!r} does not match {g!r}")
    return mapping


def _bind_size(mapping, g, c, what):
    syms = list(g.symbols())
    if len(syms) == 1 and isinstance(syms[0], SizeSym) and g is Poly.sym(syms[0]):
        s = syms[0]
        if g is c and s not in mapping:
            return
        if s in mapping and mapping[s] is not c:
            raise ProofError(f"{what}: size {s.name} would be both {mapping[s]} and {c}")
        mapping[s] = c
        return
    if g.subst(mapping) is not c:
        raise ProofError(f"{what}: size {g} does not match {c}")


def _instances(stmt: TheoremStatement, args, kw, what):
    """``(facts, result)``: the caller's statements, proved by instantiating the cited
    theorem (or left pending, with the reason, when it is not proved)."""
    res = run_proof(stmt.module)
    ctx = current()
    if ctx is not None and stmt.module not in ctx.cites:
        ctx.cites.append(stmt.module)
    givens = [a for a in args if isinstance(a, Fact)]
    sts = stmt.statements(*[a.statement if isinstance(a, Fact) else a for a in args], **kw)
    facts = [Fact(st, f"cite {stmt.module}", kind="cited") for st in sts]
    if res.status != PROVED:
        note = f"cites {stmt.module}, which is {res.status}" + (f" ({res.reason})" if res.reason else "")
        for f in facts:
            f.note = note
        if ctx is not None and note not in ctx.capped:
            ctx.capped.append(note)
        return facts, res
    if len(res.theorems) != len(sts):
        raise ProofError(f"{what}: the cited theorem proves {len(res.theorems)} statements, "
                         f"the call states {len(sts)}")
    mapping = _unify(res.generic_args or (), args, {}, what)
    for f, th in zip(facts, res.theorems):
        inst = instantiate(th, mapping) if mapping else th
        L, R = f.pair
        settle(f, K.fit(inst, L, R, what))
        if f.theorem is None:
            raise ProofError(f"{what}: the instance of the cited theorem is not {f}")
        if f.theorem.hyps:
            # The instance rests on the cited theorem's hypothesis, which the given fact
            # states; removing it needs a cut rule the kernel does not have yet.
            proved = [g.label for g in givens if g.theorem is not None and (g.theorem.lhs, g.theorem.rhs)
                      in f.theorem.hyps and not g.theorem.hyps]
            f.note = (f"rests on the hypothesis of {stmt.module}" + (f", which {', '.join(proved)} proves" if proved
                      else "") + "; discharging it needs a cut rule in the kernel (notes/kernel-requests/proof.md)")
            if ctx is not None:
                ctx.capped.append(f.note)
    return facts, res


def cite(stmt: TheoremStatement, args, kw):
    facts, _ = _instances(stmt, args, kw, f"citing {stmt.module}")
    return facts[0] if len(facts) == 1 else tuple(facts)


def _match(p: Expr, e: Expr, pattern: dict, binds: dict) -> bool:
    if id(p) in pattern:
        prev = binds.get(id(p))
        if prev is None:
            if isinstance(p, TensorSymbol) and len(p.shape) != len(e.shape):
                return False
            binds[id(p)] = e
            return True
        return prev == e
    if type(p) is not type(e) or len(p.args) != len(e.args):
        return False
    if not p.args:
        return p == e
    if getattr(p, "fn", None) is not getattr(e, "fn", None) or getattr(p, "exponent", None) != getattr(
            e, "exponent", None):
        return False
    return all(_match(a, b, pattern, binds) for a, b in zip(p.args, e.args))


def cite_at(stmt, node: Expr, args):
    """Rewrite ``node`` with a cited theorem ``lhs = rhs``: the arguments are given or found
    by matching ``node`` against the theorem's generic left side."""
    if not isinstance(stmt, TheoremStatement):
        stmt = getattr(stmt, "apply", stmt)
    if not isinstance(stmt, TheoremStatement):
        raise ProofError(f"apply: {stmt!r} is not a theorem")
    what = f"applying {stmt.module}"
    if not args:
        res = run_proof(stmt.module)
        if res.generic_args is None or not res.goal_statements:
            raise ProofError(f"{what}: the cited theorem did not state its goal ({res.status}: {res.reason})")
        generic = list(res.generic_args)
        pattern = {id(g): g for g in generic if isinstance(g, (TensorSymbol, IntSymbol))}
        binds: dict = {}
        goal = res.goal_statements[0]
        if not isinstance(goal, Equality) or not _match(goal.lhs, node, pattern, binds):
            raise ProofError(f"{what}: {node} does not match {goal.lhs}")
        size_binds = {}
        for g in generic:
            if isinstance(g, TensorSymbol) and id(g) in binds:
                for gs, cs in zip(g.shape, binds[id(g)].shape):
                    if len(gs.terms) == 1:
                        size_binds[gs.skey] = cs
        args = []
        for g in generic:
            if id(g) in binds:
                args.append(binds[id(g)])
            elif isinstance(g, IntSymbol) and g.kind == "size":
                p = Poly.sym(g.sym)
                if p.skey not in size_binds:
                    raise ProofError(f"{what}: cannot tell the size {g.name} from {node}")
                args.append(SizeExpr(size_binds[p.skey]))
            else:
                raise ProofError(f"{what}: cannot tell the argument {g} from {node}")
    facts, _ = _instances(stmt, tuple(args), {}, what)
    f = facts[0]
    if f.theorem is None:
        raise ProofError(f"{what}: {f.note}")
    if not isinstance(f.statement, Equality):
        raise ProofError(f"{what}: the cited statement is not an equation")
    if f.statement.lhs != node:
        th = K.decide(node.term, f.pair[0], what)
        return f.statement.rhs, K.chain(th, f.theorem)
    return f.statement.rhs, f.theorem

