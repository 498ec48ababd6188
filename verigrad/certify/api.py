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

Options (each also a command-line flag of ``verigrad certify``):

- ``output=[0]``: claim about these outputs only (the others' cotangents are zero);
- ``wrt=["logits"]``: claim about these arguments' cotangents only;
- ``minimum={"k": 2}``: lower bounds of size symbols (default 1);
- ``assume=["sum(targets, -1) == 1"]``: preconditions (``verigrad.certify.assume``),
  listed on the certificate; what is proved holds for every input satisfying them;
- ``stop_gradient="jax"`` (default): ``stop_gradient`` has derivative zero, as when JAX
  differentiates the forward, and an inner ``custom_jvp``/``custom_vjp`` is read by its
  primal body only where its rule agrees with that body's derivative (``custom_rules``;
  otherwise UNKNOWN); ``"identity"``: the value passes and inner custom rules are their
  primal bodies (the mathematical reading, stated on the certificate);
- ``mask_value_as_inf=True``: a finite mask value (a constant at most -1e8, such as
  ``-0.7 * float32 max``) is read as -inf. By default it is the real number it is, and a
  masked probability ``exp(M - m)`` is positive: a backward that treats it as zero is
  then not the exact VJP (nor refutable in floating point). With the option the claim is
  about the -inf reading, stated as an assumption: the code agrees with it wherever
  ``exp(M - m)`` underflows to 0 (each row's best unmasked score above ``M + 745``), and
  fully masked rows are not covered (NaN in the reading, uniform in the code);
- ``timeout``: seconds for the whole run; ``claim_timeout``: seconds per claim (proof
  and search); ``budget``: the kernel's work budget per decision (monomial products).
  A claim past its limit is UNKNOWN with the reason, soon.
- ``max_memory``: GiB the process may hold while a claim is proved or refuted (default:
  three quarters of what it could hold when certify started); past it the claim is
  UNKNOWN, saying so, instead of the system killing the process.
- a parameter with a default value and no shape is held at its default; a
  ``nondiff_argnums`` argument, or any other, may be given a Python value in ``shapes``.
"""
from __future__ import annotations

import time
from functools import partial
from dataclasses import dataclass, field

from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError, SizeBranchError
from verigrad.kernel import Failure, KernelError, Theorem
from verigrad.kernel import terms as T
from . import claims as C
from . import counterexample
from .certificate import Certificate, Counterexample, combine_status
from .clock import MemoryLimit, Timeout, deadline, default_memory_limit, expired, memory_guard
from .obligations import (BadInput, Settings, custom_gradient_function, from_custom_gradient, from_custom_vjp,
                          from_pair)
from .specs import Held, parse_spec
from .validate import confirm, plan_for, validate

DEFAULT_BUDGET = 3_000_000       # monomial products per kernel decision (a few seconds)
DEFAULT_SEARCH_SECONDS = 5.0     # the counterexample search of one claim
AFTER_REFUTED_SECONDS = 2.0      # ... once another claim of the certificate is refuted


# The claim is about the user's Python as JAX traces it: at symbolic sizes (a Python branch on
# a size is refused) and, checked in the kernel, at one concrete assignment (exact_sizes). Code
# that tells one concrete size from another, or notices how often it is traced, is not seen
# (red team RT4-A's two unfixable cases): said where the claim's scope is said.
TRACED = ("; about the Python code as it traces at symbolic sizes and at one concrete size assignment checked "
          "in the kernel: code that tells one concrete size from another is outside the claim")


@dataclass
class VjpCertificate(Certificate):
    """A certificate for a custom backward: ``wrt`` holds one certificate per argument,
    ``forward`` one per output of the fwd rule; ``assumptions`` what the import assumes
    and the preconditions given (``hypotheses``); ``validation`` the translation-validation
    verdict."""
    forward: list = field(default_factory=list)
    assumptions: list = field(default_factory=list)
    hypotheses: list = field(default_factory=list)
    validation: str = ""
    timings: dict = field(default_factory=dict)   # seconds per stage: import, validation, claims
    settings: dict = field(default_factory=dict)  # the options the claims were read with
    theorems: list = field(default_factory=list, repr=False, compare=False)  # the kernel's, every claim's

    def claims(self) -> list:
        return list(self.forward) + list(self.wrt.values())

    @property
    def scope(self) -> str:
        mins = self.settings.get("min")
        scope = super().scope + TRACED
        if not mins:
            return scope
        return scope.replace("for every size", "for every size with " +
                             ", ".join(f"{k} {v}" for k, v in mins.items()), 1)

    def as_dict(self):
        out = super().as_dict()
        out["forward"] = [c.status for c in self.forward]
        out["assumptions"] = list(self.assumptions)
        out["hypotheses"] = list(self.hypotheses)
        out["validation"] = self.validation
        out["detail"] = self.detail
        out["claims"] = {c.name: {"status": c.status, "seconds": round(c.seconds, 6), "detail": c.detail}
                         for c in self.claims()}
        if self.settings:
            out["settings"] = dict(self.settings)
        return out


@dataclass
class _Run:
    """The limits of one certification."""
    timeout: float | None = None
    claim_timeout: float | None = None
    budget: int | None = DEFAULT_BUDGET
    search_seconds: float | None = DEFAULT_SEARCH_SECONDS
    t0: float = 0.0
    max_memory: int | None = None     # bytes (memory_guard)

    @property
    def at(self):
        return self.t0 + self.timeout if self.timeout else None


def certify(fn, shapes: dict, *, name: str | None = None, timeout: float | None = None, progress=None,
            output=None, wrt=None, minimum: dict | None = None, assume=(), stop_gradient: str = "jax",
            claim_timeout: float | None = None, budget: int | None = DEFAULT_BUDGET,
            search_seconds: float | None = DEFAULT_SEARCH_SECONDS, mask_value_as_inf: bool = False,
            max_memory: float | None = None) -> VjpCertificate:
    """Certify the ``jax.custom_vjp`` (or ``jax.custom_gradient``) ``fn``: its fwd rule
    computes ``fn`` and its bwd rule is the exact VJP, for every size. ``shapes`` maps each
    positional argument to its shape; any argument may be given a Python value instead
    (a ``nondiff_argnums`` one must be). See the module docstring for the options."""
    run = _Run(timeout, claim_timeout, budget, search_seconds, time.perf_counter(), _memory(max_memory))
    specs, statics = _specs(shapes)
    settings = _settings(output, wrt, minimum, stop_gradient)
    settings.mask_as_inf = bool(mask_value_as_inf)
    assume = _parse_assumptions(assume, settings)
    what = name or getattr(fn, "__name__", None) or "f"
    _step(progress, "tracing and importing")
    try:
        with deadline(run.at, "the run", timeout):
            if custom_gradient_function(fn) is not None:
                ob = from_custom_gradient(fn, specs, statics, name, settings)
            else:
                ob = from_custom_vjp(fn, specs, statics, name, settings)
    except SizeBranchError as e:
        return _size_branch(what, specs, e, run.t0)
    except Timeout as e:
        return _timed_out(what, specs, e, run, "while tracing and importing")
    except JaxprImportError as e:
        if isinstance(e, BadInput) or getattr(e, "bad_input", False) or type(e).__name__ == "SpecError":
            raise
        return _refused(fn, what, specs, statics, settings, e, run, assume, progress)
    return _read_with(_decide(ob, run, progress, assume), settings)


def _refused(fn, name, specs, statics, settings, e, run: _Run, assume, progress) -> VjpCertificate:
    """The importer refuses the code (exact or refuse): nothing can be proved. A wrong
    backward may still be REFUTED by running JAX alone (``probe``); else UNKNOWN with the
    importer's reason."""
    from . import probe
    from .obligations import custom_gradient_function, parameter_defaults, positional_parameters
    inner = custom_gradient_function(fn)
    primal = (lambda *a: inner(*a)[0]) if inner is not None else fn.fun
    params = positional_parameters(inner if inner is not None else fn.fun)
    statics = dict(statics)
    for p, v in parameter_defaults(inner if inner is not None else fn.fun).items():
        if p not in specs and p not in statics:
            statics[p] = v
    why = f"not imported: {e}"
    ce = None
    if not assume:      # a precondition cannot be honoured without the import: no search
        _step(progress, "running JAX to look for a counterexample")
        try:
            left = run.at - time.perf_counter() if run.at else None
            with deadline(run.at, "the run", run.timeout):
                ce = probe.search(fn, primal, params, specs, statics, settings.outputs, settings.minimum,
                                  min(x for x in (run.search_seconds or 15.0, left) if x is not None))
        except Timeout:
            ce = None
        except Exception as err:  # noqa: BLE001 - the probe is a bonus; the reason stands
            why += f"; running JAX to look for a counterexample failed: {type(err).__name__}"
    wrt = {}
    for a, s in specs.items():
        if s.kind != "real" or (settings.wrt is not None and a not in settings.wrt):
            continue
        if ce is not None and ce.argument == a:
            wrt[a] = Certificate(a, "REFUTED", f"bwd(x, dy)[{a}] = J^T dy", counterexample=ce,
                                 detail=f"{why}; refuted by running JAX (the backward against jax.vjp of the "
                                        "undecorated forward, confirmed by finite differences)")
        else:
            wrt[a] = Certificate(a, "UNKNOWN", f"bwd(x, dy)[{a}] = J^T dy", detail=why)
    status = "REFUTED" if ce is not None else "UNKNOWN"
    return VjpCertificate(name, status, f"custom backward of {name} = J^T dy for all sizes", wrt=wrt,
                          counterexample=ce, detail=why, seconds=time.perf_counter() - run.t0,
                          sizes={s.name: ",".join(s.dims) for s in specs.values()},
                          validation=f"not run: the import stopped: {e}")


def certify_vjp(forward, backward, shapes: dict, *, name: str | None = None, timeout: float | None = None,
                progress=None, output=None, wrt=None, minimum: dict | None = None, assume=(),
                stop_gradient: str = "jax", claim_timeout: float | None = None,
                budget: int | None = DEFAULT_BUDGET,
                search_seconds: float | None = DEFAULT_SEARCH_SECONDS, mask_value_as_inf: bool = False,
                max_memory: float | None = None) -> VjpCertificate:
    """Certify ``backward(*primals, dy)`` (one cotangent per primal) as the VJP of
    ``forward`` for every size."""
    run = _Run(timeout, claim_timeout, budget, search_seconds, time.perf_counter(), _memory(max_memory))
    specs, statics = _specs(shapes)
    if statics:
        raise BadInput(f"certify_vjp takes shapes only; {', '.join(statics)} given values")
    settings = _settings(output, wrt, minimum, stop_gradient)
    settings.mask_as_inf = bool(mask_value_as_inf)
    assume = _parse_assumptions(assume, settings)
    what = name or getattr(forward, "__name__", "forward")
    _step(progress, "tracing and importing")
    try:
        with deadline(run.at, "the run", timeout):
            ob = from_pair(forward, backward, specs, name, settings)
    except SizeBranchError as e:
        return _size_branch(what, specs, e, run.t0)
    except Timeout as e:
        return _timed_out(what, specs, e, run, "while tracing and importing")
    return _read_with(_decide(ob, run, progress, assume), settings)


def _read_with(cert: VjpCertificate, settings: Settings) -> VjpCertificate:
    """The certificate states every option that narrows its claim (red team RT-17: a claim
    made with ``--min n=2``, ``--wrt x`` or ``--stop-gradient identity`` read as one for
    every size, every argument, JAX's derivative)."""
    if settings.minimum:
        cert.settings["min"] = {k: f">= {v}" for k, v in settings.minimum.items()}
        cert.statement = cert.statement.replace("for all sizes", "for all sizes with " + ", ".join(
            f"{k} >= {v}" for k, v in settings.minimum.items()))
    if settings.wrt is not None:
        cert.settings["wrt"] = list(settings.wrt)
    if settings.stop_gradient == "identity":
        cert.settings["stop_gradient"] = "identity: stop_gradient read as the identity, not JAX's derivative zero"
    return cert


def _parse_assumptions(assume, settings: Settings) -> list:
    """The preconditions, parsed before the import: ``any(mask, axis)`` and ``0 <= e < k``
    are facts the importer uses (rows of that mask are alive; one-hot rows of ``e`` against
    ``[0, k)`` sum to 1); all but ``any`` also reparametrize after it."""
    from . import assume as A
    if isinstance(assume, str):
        assume = [assume]
    parsed = [a if isinstance(a, A.Assumption) else A.parse(a) for a in (assume or ())]
    for a in parsed:
        if a.kind == "any":
            settings.alive.setdefault(a.name, []).append(a.axis)
        elif a.kind == "range":
            settings.ranges.setdefault(a.name, []).append(partial(A.size_bound, a.value, text=a.text))
    return parsed


def _settings(output, wrt, minimum, stop_gradient) -> Settings:
    if stop_gradient not in ("jax", "identity"):
        raise BadInput(f"stop_gradient must be 'jax' or 'identity', not {stop_gradient!r}")
    if isinstance(output, int) and not isinstance(output, bool):
        output = [output]
    if output is not None and not all(isinstance(k, int) and not isinstance(k, bool) for k in output):
        raise BadInput(f"output must be an output position or a list of them, not {output!r}")
    if isinstance(wrt, str):
        wrt = [wrt]
    minimum = dict(minimum or {})
    for k, v in minimum.items():
        if not (isinstance(k, str) and k.isidentifier()) or not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise BadInput(f"minimum: {k!r}={v!r} must be a size symbol and an integer >= 1")
    return Settings(None if output is None else list(output), None if wrt is None else list(wrt), minimum,
                    stop_gradient)


def _size_branch(name: str, specs: dict, e: SizeBranchError, t0: float) -> VjpCertificate:
    """UNKNOWN: the code branches on a symbolic size, so no import holds for every size."""
    what = "bwd(x, dy)[{}] = J^T dy"
    wrt = {a: Certificate(a, "UNKNOWN", what.format(a), detail=str(e)) for a, s in specs.items() if s.kind == "real"}
    return VjpCertificate(
        name, "UNKNOWN", f"custom backward of {name} = J^T dy for all sizes", wrt=wrt,
        detail=str(e), seconds=time.perf_counter() - t0,
        sizes={s.name: ",".join(s.dims) for s in specs.values()},
        validation=f"not run: {e}", timings={"import": time.perf_counter() - t0, "validation": 0.0, "claims": 0.0})


def _timed_out(name: str, specs: dict, e: Timeout, run: _Run, when: str) -> VjpCertificate:
    why = f"timed out {when} (the limit of {e.limit:g} s for {e.what})" if e.limit else f"timed out {when}"
    wrt = {a: Certificate(a, "UNKNOWN", f"bwd(x, dy)[{a}] = J^T dy", detail=why)
           for a, s in specs.items() if s.kind == "real"}
    return VjpCertificate(name, "UNKNOWN", f"custom backward of {name} = J^T dy for all sizes", wrt=wrt,
                          detail=why, seconds=time.perf_counter() - run.t0,
                          sizes={s.name: ",".join(s.dims) for s in specs.values()}, validation=f"not run: {why}")


def _memory(max_memory: float | None) -> int | None:
    """``max_memory`` GiB in bytes; by default three quarters of what the process could
    hold now (``clock.default_memory_limit``)."""
    if max_memory is None:
        return default_memory_limit()
    if not max_memory > 0:
        raise BadInput(f"max_memory must be a positive number of GiB, not {max_memory!r}")
    return int(max_memory * 2**30)


def _specs(shapes: dict):
    if not isinstance(shapes, dict):
        raise BadInput("shapes must be a dict from argument name to shape")
    specs, statics = {}, {}
    for k, v in shapes.items():
        if isinstance(v, Held):
            statics[k] = v.value
        elif isinstance(v, ArgSpec):
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


# -- the claims --------------------------------------------------------------------------

def _claims(ob, reparam: dict) -> list:
    """The claims of ``ob`` as ``claims.Claim``s: each forward output claimed about, then
    each argument's cotangent; arguments reparametrized by preconditions, stop_gradient
    variables substituted after differentiating."""
    rep = {v: R for v, (R, _, _) in reparam.items()}
    sub = (lambda t: T.subst(t, rep)) if rep else (lambda t: t)  # noqa: E731
    stops = [v for v, _ in ob.stopped]
    values = [sub(t) for _, t in ob.stopped]
    out = []
    if ob.fwd_out is not None:
        for k in ob.selected():
            fo, p = ob.fwd_out[k], ob.primal[k]
            out.append(C.make(f"forward output {k}", f"fwd(x)[{k}] = {ob.name}(x)[{k}]", sub(fo.term()),
                              sub(p.term())))
    for a, (fin, origin) in getattr(ob, "risky", {}).items():
        ones = T.Lamda([T.IndexVar(f"k{j}", s) for j, s in enumerate(fin.shape)], T.Num(1)) if fin.shape \
            else T.Num(1)
        out.append(C.make(f"finite {a}", f"bwd(x, dy)[{a}] is finite wherever the forward is ({origin})",
                          sub(fin.term()), ones))
    for k, (fin, fin_f, origin) in getattr(ob, "risky_forward", {}).items():
        # the fwd rule's output is finite wherever f's is (folded into "forward output k")
        out.append(C.make(f"finite forward output {k}", f"fwd(x)[{k}] is finite wherever {ob.name}(x)[{k}] is "
                          f"({origin})", sub(fin_f * fin.term()), sub(fin_f)))
    # --output: the claim is the VJP at the cotangents of the other outputs held at 0 (the search
    # draws them so); a backward that reads them is claimed about with them zero
    unclaimed = {c: (T.Lamda([T.IndexVar(f"k{j}", sz) for j, sz in enumerate(c.shape)], T.Num(0)) if c.shape
                     else T.Num(0)) for j, c in enumerate(ob.cots) if j not in ob.selected()}
    for a in ob.diff:
        x = ob.var(a)
        got = sub(ob.got(a))
        if unclaimed and any(c in got.mentions for c in unclaimed):
            got = T.subst(got, unclaimed)
        V = ob.expected(a)
        params, vals = list(stops), list(values)
        if x in rep:     # the derivative is taken in x over the whole space, then x := R
            V = T.subst(V, {v: R for v, R in rep.items() if v is not x})
            params.append(x)
            vals.append(rep[x])
        else:
            V = sub(V)
        out.append(C.make(a, f"bwd(x, dy)[{a}] = J^T dy", got, V, params, vals))
    return out


def _decide(ob, run: _Run, progress, assume=()) -> VjpCertificate:
    from . import assume as A
    t_import = time.perf_counter()
    parsed = [a if isinstance(a, A.Assumption) else A.parse(a) for a in assume]
    reparam = A.apply(parsed, ob) if parsed else {}
    hypotheses = list(getattr(ob, "hypotheses", []))
    _step(progress, "checking the import against JAX")
    try:
        with deadline(run.at, "the run", run.timeout):
            problem = validate(ob)
            if problem is None:
                # and exactly, in the kernel, at one concrete size (RT-49: a path taken only there)
                from .exact_sizes import check as exact_at_a_size
                _step(progress, "proving the import at a concrete size the same")
                problem = exact_at_a_size(ob, run.budget)
    except Timeout as e:
        problem = f"timed out while checking the import against JAX (the limit of {e.limit:g} s for {e.what})"
    summary = getattr(ob, "validation_summary", "") or "not validated"
    t_valid = time.perf_counter()
    claim_list = _claims(ob, reparam) if problem is None else []
    certs = []
    if problem is not None:
        labels = [f"forward output {k}" for k in ob.selected()] if ob.fwd_out is not None else []
        for label in labels + list(ob.diff):
            certs.append(Certificate(label, "UNKNOWN", label, detail="not attempted: the import failed validation"))
    for claim in claim_list:
        if expired(run.at):
            certs.append(Certificate(claim.label, "UNKNOWN", claim.what,
                                     detail=f"not attempted: the run's limit of {run.timeout:g} s passed"))
            continue
        _step(progress, f"proving {claim.label}")
        if any(c.status == "REFUTED" for c in certs) and run.search_seconds:
            # the certificate is refuted already: the other claims' searches are kept short
            run = _Run(run.timeout, run.claim_timeout, run.budget, min(run.search_seconds, AFTER_REFUTED_SECONDS),
                       run.t0, run.max_memory)
        certs.append(_claim(ob, claim, run, progress))
    finite_theorems = [c.theorem for c in certs if c.name.startswith("finite ") and c.theorem is not None]
    certs = _finiteness_folded(certs)
    forward = [c for c in certs if c.name.startswith("forward output ")]
    wrt = {c.name: c for c in certs if not c.name.startswith("forward output ")}
    status = "UNKNOWN" if problem is not None else combine_status(c.status for c in certs)
    inner = []
    if status in ("PROVED", "CHECKED") and getattr(ob, "custom_rules", []) and \
            getattr(ob, "stop_gradient", "jax") == "jax":
        # the claim reads each inner custom rule by its body: that is a claim of its own
        from .inner_rules import prove as prove_inner_rules
        _step(progress, "proving the inner custom rules")
        inner = prove_inner_rules(ob, _decide, _failing_condition, run, progress)
        other = getattr(ob, "exact_import", None)
        if other is not None and getattr(other, "custom_rules", []):
            # JAX runs each rule's Python again at concrete sizes, and the import there reads the
            # call by its body: the rules are proved as they trace at that size too, so a rule
            # taking another path at concrete shapes is not read as proved (red team RT4-A)
            from .exact_sizes import _sizes_out, assignment
            at = assignment(ob)
            stated = {}
            for r in inner:
                stated.setdefault(r.what, set()).update(_sizes_out(c, at) for c in r.conditions)
            for r in prove_inner_rules(other, _decide, _failing_condition, run, progress):
                # the symbolic calls' conditions stand for these sizes too, but only those: a
                # condition only the concrete trace's proof rests on (a rule that is another
                # there, ``g`` off ``a0 == 0``) would be stated nowhere (red team rt5a)
                extra = [c for c in r.conditions if _sizes_out(c, {}) not in stated.get(r.what, set())]
                if extra and r.status == "PROVED":
                    r.status = "UNKNOWN"
                    r.why = (f"as traced at {ob.exact_where} it is proved only under a condition the call at "
                             f"symbolic sizes does not rest on ({extra[0]}): the rule takes another path at "
                             "concrete shapes")
                r.what += f" (traced at {ob.exact_where})"
                r.conditions = []
                r.concrete = True       # proved at that size only: not listed as proved for every size
                inner.append(r)
        if any(r.status != "PROVED" for r in inner):
            status = "TESTED"
            for c in wrt.values():       # each cotangent's claim rests on the same tested link
                if c.status in ("PROVED", "CHECKED"):
                    c.status = "TESTED"
                    c.detail = "proved reading the inner custom rules by their primal bodies; see the certificate"
    mismatch = getattr(ob, "derivative_mismatch", {})
    for c in wrt.values():
        # proved about the import, which JAX's own derivative of the forward contradicts
        # (validate._derivatives). Judged after the inner rules: JAX differentiates through
        # them while the claim reads their bodies, so a rule not proved explains a
        # difference (the claim is TESTED then); with every rule proved, none may remain.
        if c.status in ("PROVED", "CHECKED") and c.name in mismatch:
            c.status, c.theorem = "UNKNOWN", None
            c.axioms, c.side_conditions = [], []
            c.detail = f"proved about the imported term, but {mismatch[c.name]}"
            status = combine_status(x.status for x in certs)
    theorems = [c.theorem for c in certs if c.theorem is not None] + finite_theorems
    axioms = sorted({a for th in theorems for a in th.axioms()} | {a for r in inner for a in r.axioms})
    conds = sorted({str(c) for th in theorems for c in th.conds})
    conds += [f"at each call of {r.what}: " + "; ".join(r.conditions) for r in inner if r.conditions]
    ce = next((c.counterexample for c in certs if c.status == "REFUTED"), None)
    unknown = [c for c in certs if c.status == "UNKNOWN"]
    evidence = "; ".join(f"{c.name}: {c.evidence}" for c in unknown if c.evidence)
    detail = "; ".join(f"{c.name}: {c.detail}" for c in unknown if c.detail)
    weak = [r for r in inner if r.status != "PROVED"]
    if weak:
        detail = "; ".join(x for x in [detail] + [
            f"the claim reads the custom rule of {r.what} by its primal body, and that the rule is the body's "
            f"derivative is only tested numerically (its own claim is {r.status}" + (f": {r.why}" if r.why else "")
            + ")" for r in weak] if x)
    if problem is not None:
        detail = ("TRANSLATION VALIDATION FAILED (an importer bug, or Python code that depends on a size's value "
                  "in a way tracing at symbolic sizes cannot see, such as a dict lookup; nothing is claimed): "
                  + problem)
    settings = {}
    if ob.outputs is not None:
        settings["output"] = list(ob.outputs)
    if ob.statics:
        settings["static"] = {k: repr(v) for k, v in ob.statics.items()}
    if ob.stopped:
        settings["stop_gradient"] = "jax: derivative zero (" + ", ".join(v.name for v, _ in ob.stopped) + ")"
    rules = getattr(ob, "custom_rules", [])
    if rules:
        # RT-35: which reading of the inner custom_jvp / custom_vjp rules the claim is about
        settings["custom_rules"] = (
            "read by their primal bodies, not by the rules JAX differentiates with: " + ", ".join(rules)
            if getattr(ob, "stop_gradient", "jax") == "identity" else
            "each agrees with the derivative of its primal body at every sample (the body is read): "
            + ", ".join(rules) + ("; proved for every size and value: " + ", ".join(
                r.what for r in inner if r.status == "PROVED" and not r.concrete)
                if any(r.status == "PROVED" and not r.concrete for r in inner) else ""))
    return VjpCertificate(
        ob.name, status, f"custom backward of {ob.name} = J^T dy for all sizes",
        theorem=theorems[0] if status == "PROVED" and not wrt and theorems else None,
        wrt=wrt, axioms=axioms, side_conditions=conds + list(ob.assumptions) + hypotheses, counterexample=ce,
        evidence=evidence, seconds=time.perf_counter() - run.t0, detail=detail,
        sizes={s.name: ",".join(s.dims) for s, _ in ob.args},
        forward=forward, assumptions=list(ob.assumptions), hypotheses=hypotheses,
        validation="FAILED: " + problem if problem else summary, settings=settings,
        timings={"import": t_import - run.t0, "validation": t_valid - t_import, "claims": time.perf_counter() - t_valid},
        theorems=theorems)


def _failing_condition(ob, theorem) -> str | None:
    """A side condition of ``theorem`` that fails at random inputs of ``ob``'s domain (so
    on a set of positive measure), in words; None if each holds at every draw."""
    from . import conditions
    from .validate import _variables, plan_for
    variables = _variables(ob)

    def sample(sizes, rng):
        """A draw at which JAX's forward is finite (the claim covers only those: where JAX
        computes NaN, as log of a negative, there is no function to differentiate)."""
        first = None
        for k in range(24):
            kind = ("N(0,1)", "positive", "mixed", "N(0,10)")[k % 4] if k >= 4 else "N(0,1)"
            values = ob.domain.sample(variables, sizes, rng, kind)
            first = first or values
            if _defined(ob, values):
                return values
        return first
    for c in sorted(theorem.conds, key=lambda c: (c.kind, c.term.skey)):
        # A condition on a cotangent is not rare: JAX feeds exact zero cotangents (an output
        # the loss does not use, a masked loss, jacrev's one-hot seeds), so a claim must hold
        # at every cotangent (the render tie refuses side conditions for the same reason)
        if on := sorted(v.name for v in ob.cots if v in c.term.mentions):
            return (f"the side condition {c} constrains the cotangent {', '.join(on)}: a backward is called "
                    "with exact zero cotangents (outputs the loss does not use, masked losses), so the claim "
                    "must hold at every cotangent")
    return conditions.failing(theorem, sample, plan_for(ob)[:4], alive=getattr(ob, "alive", None))


def _defined(ob, values) -> bool:
    """Whether JAX's forward is finite at ``values`` (True when it cannot be run)."""
    import numpy as np
    from .validate import _jax_call, functions
    if getattr(ob, "symbolic_closure", False) or ob.primal_fn is None:
        return True
    try:
        args = [ob.domain.jax_value(v, values[v]) for _, v in ob.args]
        outs = _jax_call(functions(ob)[0], args)
    except Exception:  # noqa: BLE001 - not runnable here: no filter
        return True
    return all(np.all(np.isfinite(np.asarray(o, dtype=np.float64))) for o in outs
               if np.asarray(o).dtype.kind in "fc")


def _finiteness_folded(certs: list) -> list:
    """The claims ``finite a`` (the backward's cotangent of ``a`` is finite wherever the
    forward is) folded into ``a``'s claim: a PROVED cotangent whose finiteness is not
    proved is UNKNOWN, with the reason; a proved finiteness adds its theorem's axioms."""
    finite = {c.name[len("finite "):]: c for c in certs if c.name.startswith("finite ")}
    out = []
    for c in certs:
        if c.name.startswith("finite "):
            continue
        f = finite.get(c.name)
        if f is not None and c.status == "PROVED":
            if f.status != "PROVED":
                c = Certificate(c.name, "UNKNOWN", c.statement, seconds=c.seconds + f.seconds,
                                detail=f"proved about the imported term, but not that XLA computes it: "
                                       f"{f.statement} is not shown: {f.detail}")
            else:
                c.axioms = sorted(set(c.axioms) | set(f.axioms))
                c.side_conditions = sorted(set(c.side_conditions) | set(f.side_conditions))
        out.append(c)
    return out


def _claim(ob, claim: C.Claim, run: _Run, progress) -> Certificate:
    t0 = time.perf_counter()
    label, what = claim.label, claim.what
    at = min((x for x in (run.at, t0 + run.claim_timeout if run.claim_timeout else None) if x is not None),
             default=None)
    limit_what = "the claim" if run.claim_timeout and (run.at is None or t0 + run.claim_timeout <= run.at) \
        else "the run"
    limit = run.claim_timeout if limit_what == "the claim" else run.timeout
    try:
        with deadline(at, limit_what, limit), memory_guard(run.max_memory):
            res = C.prove(claim, run.budget)
    except MemoryLimit as e:
        return Certificate(label, "UNKNOWN", what, seconds=time.perf_counter() - t0,
                           detail=f"stopped while proving: {e} (--max-memory)")
    except Timeout as e:
        if e.what == "the run" and limit_what != "the run":
            raise
        return Certificate(label, "UNKNOWN", what, seconds=time.perf_counter() - t0,
                           detail=f"timed out while proving (the limit of {e.limit:g} s for {e.what})")
    except KernelError as e:
        res = Failure(f"ill-formed claim: {e}")
    if isinstance(res, Theorem) and res.conds:
        bad = _failing_condition(ob, res)
        if bad:     # not a PROVED; a counterexample may still be found
            res = Failure(f"proved only under a condition: {bad}")
    if isinstance(res, Theorem) and label in getattr(ob, "nonfinite_backward", {}):
        # the kernel proved the imported term, which reads 0 * (1/0) as 0; XLA computes NaN
        res = Failure(f"proved about the imported term, but {ob.nonfinite_backward[label]}")
    if isinstance(res, Theorem):
        return Certificate(label, "PROVED", res.statement(), res, axioms=res.axioms(),
                           side_conditions=[str(c) for c in sorted(res.conds, key=str)],
                           seconds=time.perf_counter() - t0)
    reason = _short(res.reason)
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
        return _replayable(ob, candidate, exp, got_v, values)

    every = [v for _, v in ob.args] + list(ob.cots)

    def sampler(variables, sizes, kind, rng):
        """The domain's draws (integer arguments, one-hot models, compared constants);
        the cotangents of the outputs not claimed about are zero."""
        values = ob.domain.draw(set(variables) | set(every), sizes, kind, rng)
        for j, c in enumerate(ob.cots):
            if j not in ob.selected() and c in values:
                values[c] = values[c] * 0.0
        return values

    def repair(values, sizes, rng):
        """A draw at which JAX's forward is not finite (sqrt of a negative) says nothing:
        draw again (the same distribution, fresh values) a few times."""
        if _defined(ob, values):
            return
        kind = counterexample.CURRENT.get("kind", "N(0,1)")
        for k in range(8):
            fresh = sampler(list(values), sizes, kind if k < 6 else "positive", rng)
            if _defined(ob, fresh):
                values.clear()
                values.update(fresh)
                return

    search_at = t0 + run.search_seconds if run.search_seconds else None
    at2 = min((x for x in (at, search_at) if x is not None), default=None)
    try:
        with deadline(at2, "the search" if at2 == search_at else limit_what,
                      run.search_seconds if at2 == search_at else limit), memory_guard(run.max_memory):
            try:       # the exact derivative, as a term without derivatives (None: past the budget)
                exact = claim.plain(run.budget) if claim.staged else C.derivative_free(claim.expected, run.budget)
            except KernelError:
                exact = None
            got, expected = claim.got, claim.expected
            # the draws need every argument's sizes: a claim about a scalar (a fwd rule's constant
            # output) mentions none, and an assignment without them cannot be drawn at
            needed = {s for _, v in ob.args for d in v.shape for s in d.symbols()}
            sizes = [sz for sz in counterexample.size_assignments([got, expected]) if needed <= set(sz)]
            sizes += [sz for sz in plan_for(ob) if sz not in sizes]
            found = counterexample.search(got, expected, label, sizes=sizes, sampler=sampler, accept=confirmed,
                                          exact=exact, prepare=repair)
    except MemoryLimit as e:
        return Certificate(label, "UNKNOWN", what, seconds=time.perf_counter() - t0,
                           detail=f"not proved ({reason}); the search for a counterexample stopped: {e} (--max-memory)")
    except Timeout as e:
        if e.what == "the run" and limit_what != "the run":
            raise
        note = f"not proved ({reason}); no counterexample within the limit of {e.limit:g} s for {e.what}"
        if rejected:
            note += (f"; {len(rejected)} counterexample(s) of the imported terms not confirmed by running JAX, "
                     f"first {rejected[0]}")
        return Certificate(label, "UNKNOWN", what, seconds=time.perf_counter() - t0, detail=note)
    if isinstance(found, counterexample.Evidence):
        note = f"not proved: {reason}"
        if rejected:
            note += (f"; {len(rejected)} counterexample(s) of the imported terms not confirmed by running JAX, "
                     f"first {rejected[0]}")
        return Certificate(label, "UNKNOWN", what, evidence=str(found), detail=note,
                           seconds=time.perf_counter() - t0)
    return Certificate(label, "REFUTED", what, counterexample=found, detail=f"not proved: {reason}",
                       seconds=time.perf_counter() - t0)


def _short(reason: str, limit: int = 600) -> str:
    return reason if len(reason) <= limit else reason[:limit] + " ..."


def _replayable(ob, candidate, expected: float, got: float, values: dict) -> Counterexample:
    """The counterexample with everything needed to run it again: every input as JAX
    receives it, every cotangent, and which output's cotangent is set."""
    import numpy as np
    inputs = {s.name: np.asarray(ob.domain.jax_value(v, values[v])) for s, v in ob.args}
    cots = {c.name: np.asarray(values[c], dtype=np.float64) for c in ob.cots}
    outputs = ob.selected()
    return Counterexample(candidate.sizes, candidate.argument, candidate.index, expected, got,
                          candidate.inputs_seed, inputs=inputs, cotangents=cots,
                          outputs=list(outputs), statics={k: repr(v) for k, v in ob.statics.items()},
                          distribution=getattr(candidate, "distribution", ""))


__all__ = ["certify", "certify_vjp", "VjpCertificate", "BadInput", "JaxprImportError", "Timeout"]
