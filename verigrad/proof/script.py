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

Citations are in ``citation``, connecting goals to proved facts in ``closing``.

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

from verigrad.kernel import KernelError, Theorem
from verigrad.kernel import terms as T

from .expr import Expr, ProofError, TensorSymbol
from .facts import ProofLog, definition_fact, given_fact, goal_fact
from .statements import Statement

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
            if ctx.statement_only:
                raise _Stated(sts, givens)
            return ApplyResult(sts, givens)
        from .citation import cite
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
    statement_only: bool = False      # stop at ``apply(...)``: what the file states


class _Stated(Exception):
    """Raised at ``Eq << apply(...)`` when only the statement is wanted."""

    def __init__(self, statements, givens):
        super().__init__("statement only")
        self.statements, self.givens = statements, givens


def statement_of(module: str):
    """What a theorem file states, without proving it: ``(goals, givens)`` as kernel
    equations ``(L, R)``. The proof runs only up to its ``Eq << apply(...)``; None if
    it never gets there."""
    mod = _import(module)
    proof = getattr(mod, "prove", None)
    if not callable(proof):
        return None
    ctx = Context(module, ProofLog(owner=module), statement_only=True)
    _stack.append(ctx)
    try:
        proof(ctx.log)
    except _Stated as st:
        return [s.pair() for s in st.statements], [g.pair() for g in st.givens]
    except Exception:  # noqa: BLE001 - a file that fails before stating anything states nothing
        return None
    finally:
        _stack.pop()
    return None


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
    from .closing import close_goals
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


# -- complex symbols ---------------------------------------------------------------------------

RING_AXIOMS = frozenset({"ring", "pow_expand", "pow_mul", "pow_add_int", "indicator_idempotent", "delta_decide",
                         "delta_subst", "delta_elim", "sum_linear", "sum_const", "sum_pull", "sum_split", "fubini",
                         "definition", "extensionality", "congruence",
                         # index structure only (valid over any ring):
                         "entry_off_shape", "delta_radix", "sum_nest", "sum_window", "sum_reindex",
                         "index_split", "case_split"})


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
