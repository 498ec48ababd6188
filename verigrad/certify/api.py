"""Certify a user's ``jax.custom_vjp`` for every size (untrusted driver; the kernel decides).

    cert = verigrad.certify(my_layer, shapes={"x": "n, d", "w": "d, m"})
    cert.status        # 'PROVED', 'REFUTED' or 'UNKNOWN'
    cert.wrt           # per-argument certificates
    cert.counterexample

Steps: trace ``f`` and its rules at symbolic sizes and import them as kernel terms
(``obligations``); check the import against JAX itself (``validate``: translation
validation, on every import); ask the kernel to prove (a) ``fwd`` computes ``f`` and
(b) each cotangent is ``J^T dy``; for a claim the kernel does not prove, search for a
counterexample at small sizes, and report it only once JAX confirms it by running the
user's code. PROVED comes only from a kernel ``Theorem``; a failed validation makes the
whole certificate UNKNOWN.

A shape is a string of comma-separated dimensions (``"n, d"``, ``"n+1, 2*n"``, ``""`` for a
scalar), optionally with a dtype (``"n:int32"``, ``"n, k:bool"``), or a tuple of them.
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError, SizeBranchError
from verigrad.kernel import Failure, KernelError, Theorem, prove_equal
from . import counterexample
from .certificate import Certificate, Counterexample, combine_status
from .obligations import BadInput, from_custom_vjp, from_pair
from .specs import parse_spec
from .validate import confirm, plan_for, validate


class Timeout(Exception):
    pass


@dataclass
class VjpCertificate(Certificate):
    """A certificate for a custom backward: ``wrt`` holds one certificate per argument,
    ``forward`` one per output of the fwd rule; ``assumptions`` what the import of
    integer arguments assumes; ``validation`` the translation-validation verdict."""
    forward: list = field(default_factory=list)
    assumptions: list = field(default_factory=list)
    validation: str = ""
    timings: dict = field(default_factory=dict)   # seconds per stage: import, validation, claims

    def claims(self) -> list:
        return list(self.forward) + list(self.wrt.values())

    def as_dict(self):
        out = super().as_dict()
        out["forward"] = [c.status for c in self.forward]
        out["assumptions"] = list(self.assumptions)
        out["validation"] = self.validation
        return out


def certify(fn, shapes: dict, *, name: str | None = None, timeout: float | None = None,
            progress=None) -> VjpCertificate:
    """Certify the ``jax.custom_vjp`` ``fn``: its fwd rule computes ``fn`` and its bwd rule
    is the exact VJP, for every size. ``shapes`` maps each positional argument to its
    shape; a ``nondiff_argnums`` argument may be given a Python value instead."""
    specs, statics = _specs(shapes)
    t0 = time.perf_counter()
    _step(progress, "tracing and importing")
    try:
        ob = from_custom_vjp(fn, specs, statics, name)
    except SizeBranchError as e:
        return _size_branch(name or getattr(fn, "__name__", None) or "f", specs, e, t0)
    return _decide(ob, t0, timeout, progress)


def certify_vjp(forward, backward, shapes: dict, *, name: str | None = None, timeout: float | None = None,
                progress=None) -> VjpCertificate:
    """Certify ``backward(*primals, dy)`` (one cotangent per primal) as the VJP of
    ``forward`` for every size."""
    specs, statics = _specs(shapes)
    if statics:
        raise BadInput(f"certify_vjp takes shapes only; {', '.join(statics)} given values")
    t0 = time.perf_counter()
    _step(progress, "tracing and importing")
    try:
        ob = from_pair(forward, backward, specs, name)
    except SizeBranchError as e:
        return _size_branch(name or getattr(forward, "__name__", "forward"), specs, e, t0)
    return _decide(ob, t0, timeout, progress)


def _size_branch(name: str, specs: dict, e: SizeBranchError, t0: float) -> VjpCertificate:
    """UNKNOWN: the code branches on a symbolic size, so no import holds for every size."""
    what = "bwd(x, dy)[{}] = J^T dy"
    wrt = {a: Certificate(a, "UNKNOWN", what.format(a), detail=str(e)) for a, s in specs.items() if s.kind == "real"}
    return VjpCertificate(
        name, "UNKNOWN", f"custom backward of {name} = J^T dy for all sizes", wrt=wrt,
        detail=str(e), seconds=time.perf_counter() - t0,
        sizes={s.name: ",".join(s.dims) for s in specs.values()},
        validation=f"not run: {e}", timings={"import": time.perf_counter() - t0, "validation": 0.0, "claims": 0.0})


def _specs(shapes: dict):
    if not isinstance(shapes, dict):
        raise BadInput("shapes must be a dict from argument name to shape")
    specs, statics = {}, {}
    for k, v in shapes.items():
        if isinstance(v, ArgSpec):
            specs[k] = ArgSpec(k, v.dims, v.dtype)
        elif isinstance(v, str):
            specs[k] = parse_spec(k, v)
        elif isinstance(v, (tuple, list)) and all(isinstance(d, (int, str)) and not isinstance(d, bool) for d in v):
            specs[k] = ArgSpec(k, tuple(str(d).strip() for d in v))
        else:
            statics[k] = v
    return specs, statics


def _step(progress, what):
    if progress is not None:
        progress(what)


@contextmanager
def _deadline(at: float | None):
    """Raise ``Timeout`` in this thread at time ``at`` (main thread only; elsewhere the
    limit is checked between claims)."""
    if at is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    left = at - time.perf_counter()
    if left <= 0:
        raise Timeout()

    def fire(signum, frame):
        # Fire again soon in case this one is swallowed (an exception raised inside a
        # gc callback is printed and ignored); leaving the block disarms the timer.
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        raise Timeout()
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _decide(ob, t0: float, timeout: float | None, progress) -> VjpCertificate:
    deadline = t0 + timeout if timeout else None
    t_import = time.perf_counter()
    _step(progress, "checking the import against JAX")
    problem = validate(ob)
    summary = getattr(ob, "validation_summary", "") or "not validated"
    t_valid = time.perf_counter()
    claims = [(f"forward output {k}", f"fwd(x)[{k}] = {ob.name}(x)[{k}]", fo.term(), p.term())
              for k, (fo, p) in enumerate(zip(ob.fwd_out or [], ob.primal))]
    claims += [(a, f"bwd(x, dy)[{a}] = J^T dy", ob.got(a), ob.expected(a)) for a in ob.diff]
    certs = []
    for label, what, got, expected in claims:
        if problem is not None:
            certs.append(Certificate(label, "UNKNOWN", what, detail="not attempted: the import failed validation"))
            continue
        _step(progress, f"proving {label}")
        certs.append(_claim(ob, label, what, got, expected, deadline, progress))
    forward = [c for c in certs if c.name.startswith("forward output ")]
    wrt = {c.name: c for c in certs if not c.name.startswith("forward output ")}
    status = "UNKNOWN" if problem is not None else combine_status(c.status for c in certs)
    theorems = [c.theorem for c in certs if c.theorem is not None]
    axioms = sorted({a for th in theorems for a in th.axioms()})
    conds = sorted({str(c) for th in theorems for c in th.conds})
    ce = next((c.counterexample for c in certs if c.status == "REFUTED"), None)
    unknown = [c for c in certs if c.status == "UNKNOWN"]
    evidence = "; ".join(f"{c.name}: {c.evidence}" for c in unknown if c.evidence)
    detail = "; ".join(f"{c.name}: {c.detail}" for c in unknown if c.detail)
    if problem is not None:
        detail = ("TRANSLATION VALIDATION FAILED (an importer bug, or Python code that depends on a size's value "
                  "in a way tracing at symbolic sizes cannot see, such as a dict lookup; nothing is claimed): "
                  + problem)
    return VjpCertificate(
        ob.name, status, f"custom backward of {ob.name} = J^T dy for all sizes",
        theorem=theorems[0] if status == "PROVED" and not wrt and theorems else None,
        wrt=wrt, axioms=axioms, side_conditions=conds + list(ob.assumptions), counterexample=ce,
        evidence=evidence, seconds=time.perf_counter() - t0, detail=detail,
        sizes={s.name: ",".join(s.dims) for s, _ in ob.args},
        forward=forward, assumptions=list(ob.assumptions),
        validation="FAILED: " + problem if problem else summary,
        timings={"import": t_import - t0, "validation": t_valid - t_import, "claims": time.perf_counter() - t_valid})


def _failing_condition(ob, theorem) -> str | None:
    """A side condition of ``theorem`` that fails at random inputs of ``ob``'s domain (so
    on a set of positive measure), in words; None if each holds at every draw."""
    from . import conditions
    from .validate import _variables, plan_for
    variables = _variables(ob)
    return conditions.failing(theorem, lambda sizes, rng: ob.domain.sample(variables, sizes, rng), plan_for(ob)[:4])


def _claim(ob, label, what, got, expected, deadline, progress) -> Certificate:
    t0 = time.perf_counter()
    try:
        with _deadline(deadline):
            res = prove_equal(got, expected)
    except Timeout:
        return Certificate(label, "UNKNOWN", what, detail="timed out while proving", seconds=time.perf_counter() - t0)
    except KernelError as e:
        res = Failure(f"ill-formed claim: {e}")
    if isinstance(res, Theorem) and res.conds:
        bad = _failing_condition(ob, res)
        if bad:     # not a PROVED; a counterexample may still be found
            res = Failure(f"proved only under a condition: {bad}")
    if isinstance(res, Theorem):
        return Certificate(label, "PROVED", res.statement(), res, axioms=res.axioms(),
                           side_conditions=[str(c) for c in sorted(res.conds, key=str)],
                           seconds=time.perf_counter() - t0)
    _step(progress, f"searching a counterexample for {label}")
    rejected: list = []

    def confirmed(candidate, values, sizes):
        """Run the user's code with JAX at the candidate: report it only if JAX agrees."""
        try:
            exp, got_v, ok = confirm(ob, label, candidate.index, values, sizes)
        except Exception as e:  # noqa: BLE001 - a failed confirmation must not refute
            rejected.append(f"{candidate} ({type(e).__name__}: {e})")
            return None
        if not ok:
            rejected.append(f"{candidate} (JAX computes expected {exp:.6g}, got {got_v:.6g})")
            return None
        return Counterexample(candidate.sizes, label, candidate.index, exp, got_v, candidate.inputs_seed)

    every = [v for _, v in ob.args] + list(ob.cots)

    def sampler(variables, sizes, kind, rng):
        """The domain's draws (integer arguments, one-hot models, compared constants)."""
        return ob.domain.draw(set(variables) | set(every), sizes, kind, rng)

    try:
        with _deadline(deadline):
            sizes = counterexample.size_assignments([got, expected])
            sizes += [sz for sz in plan_for(ob) if sz not in sizes]
            found = counterexample.search(got, expected, label, sizes=sizes, sampler=sampler, accept=confirmed)
    except Timeout:
        return Certificate(label, "UNKNOWN", what, detail=f"not proved ({res.reason}); timed out in the search",
                           seconds=time.perf_counter() - t0)
    if isinstance(found, counterexample.Evidence):
        note = f"not proved: {res.reason}"
        if rejected:
            note += (f"; {len(rejected)} counterexample(s) of the imported terms not confirmed by running JAX, "
                     f"first {rejected[0]}")
        return Certificate(label, "UNKNOWN", what, evidence=str(found), detail=note,
                           seconds=time.perf_counter() - t0)
    return Certificate(label, "REFUTED", what, counterexample=found, detail=f"not proved: {res.reason}",
                       seconds=time.perf_counter() - t0)


__all__ = ["certify", "certify_vjp", "VjpCertificate", "BadInput", "JaxprImportError", "Timeout"]
