"""Running a theorem file's proof, and what it concludes.

``run_proof(module)`` imports a theorem file (a module with ``@apply def apply(...)``
and ``@prove def prove(Eq)``, see ``theorem``), runs its proof body in a fresh context
with a fresh log ``Eq``, closes the goals (``closing``) and returns a ``ProofResult``
(memoized per process: a citation runs the cited proof once). ``statement_of(module)``
runs a proof only up to its ``Eq << apply(...)``: what the file states.

Status: *proved* (every goal has a kernel theorem resting on no hypothesis but the
theorem's own givens), *plausible* (the script ran but a goal was not reached; citing
a theorem that is not proved, or a citation cycle, also leaves the citer here), or
*failed* (a step was rejected or the script raised an error).

The script runner layer, above ``context`` and ``complex_symbols``; ``citation`` and
``theorem`` (the decorators) are above it.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass, field

from verigrad.kernel import KernelError

from .closing import close_goals
from .complex_symbols import has_complex, mentions_complex, ring_only
from .context import Context, Stated, running
from .errors import ProofError
from .proof_log import ProofLog

PROVED, PLAUSIBLE, FAILED = "proved", "plausible", "failed"


def is_theorem_file(module) -> bool:
    """Whether a module has ``@apply def apply(...)`` and ``@prove def prove(Eq)`` (each
    decorator marks what it makes)."""
    stmt, proof = getattr(module, "apply", None), getattr(module, "prove", None)
    return bool(getattr(stmt, "__verigrad_statement__", False)) and callable(proof) and \
        bool(getattr(proof, "__verigrad_proof__", False))


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
_in_progress: set = set()


def forget():
    """Drop this process's memo of proof results (tests, benchmarks)."""
    _results.clear()


def run_proof(module: str) -> ProofResult:
    """Run a theorem module's proof (memoized per process)."""
    hit = _results.get(module)
    if hit is not None:
        return hit
    if module in _in_progress:
        return ProofResult(module, "", PLAUSIBLE, reason=f"citation cycle through {module}")
    _in_progress.add(module)
    t0 = time.perf_counter()
    try:
        res = _run(module)
    finally:
        _in_progress.discard(module)
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


def statement_of(module: str, over_complex: bool = False, shown: bool = False):
    """What a theorem file states, without proving it: ``(goals, givens)`` as kernel
    equations ``(L, R)`` (with ``over_complex``, a third item: whether it mentions a
    complex symbol, which the kernel's equations do not show; with ``shown``, a last
    item: the goals as written, the record's ``display``). The proof runs only up to
    its ``Eq << apply(...)``; None if it never gets there."""
    mod = _import(module)
    proof = getattr(mod, "prove", None)
    if not callable(proof):
        return None
    ctx = Context(module, ProofLog(owner=module), statement_only=True)
    with running(ctx):
        try:
            proof(ctx.log)
        except Stated as st:
            stated = [s.pair() for s in st.statements], [g.pair() for g in st.givens]
            if over_complex:
                stated = (*stated, mentions_complex([*st.statements, *st.givens]))
            return (*stated, "; ".join(str(s) for s in st.statements)) if shown else stated
        except Exception:  # noqa: BLE001 - a file that fails before stating anything states nothing
            return None
    return None


def _run(module: str) -> ProofResult:
    try:
        mod = _import(module)
    except Exception as e:
        return ProofResult(module, "", FAILED, reason=f"cannot import: {type(e).__name__}: {e}",
                           line=_line_of(e, None))
    file = getattr(mod, "__file__", "") or ""
    if not is_theorem_file(mod):
        return ProofResult(module, file, FAILED, reason="a theorem file needs `@apply def apply(...)` and "
                                                        "`@prove def prove(Eq)`")
    log = ProofLog(owner=module)
    ctx = Context(module, log)
    res = ProofResult(module, file, FAILED, log=log, cites=ctx.cites)
    with running(ctx):
        try:
            mod.prove(log)
            res.generic_args, res.goal_statements = ctx.generic_args, ctx.goal_statements
            _conclude(res, ctx)
        except (ProofError, KernelError) as e:
            res.status, res.reason, res.line = FAILED, str(e), _line_of(e, file)
        except RecursionError as e:
            res.status, res.reason, res.line = FAILED, f"RecursionError: {e}", _line_of(e, file)
        except Exception as e:           # an error in the proof script itself
            res.status, res.reason, res.line = FAILED, f"{type(e).__name__}: {e}", _line_of(e, file)
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
    if not missing and has_complex(log):
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
