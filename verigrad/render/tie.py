r"""The render tie: the kernel checks that the emitted text denotes the certified math.

Two programs meet (``programs``): the text, interpreted op by op by the StableHLO
importer, and the JAX step function (forward, loss, certified backward, update),
interpreted primitive by primitive by the jaxpr importer, over the same input
variables. Claim: each result of ``@main`` equals the corresponding output of the JAX
function, for every value of the inputs, at the rendered sizes: **CHECKED**.

A flat proof (normal forms of whole results) is hopeless beyond a toy network: the
gradient of a first-layer weight, expanded, is the whole backward. So the tie proves
it value by value, the way a translation validator works:

1. *Pair* (``pairing``). Both programs are evaluated in float64 at one random point.
   A value of the text and a value of the math that agree there (same shape, same
   numbers, neither *degenerate*: zero, constant, or a kink on one branch) are the
   proposal that they are the same function of the inputs. Paired values share one
   variable, the *cut*: the first value of the text with those numbers.
2. *Prove.* For every member of a cut, the kernel proves its definition equals the
   cut's definition in the text, both written over earlier cuts (the values between
   are inlined): a few operations a side. If the normal forms differ, cuts are
   unfolded one at a time (a cut may hide what makes two sides equal). For every
   result, the kernel proves the text's result equals the math's, over cuts.
3. *Compose* (congruence). By induction along the text, each cut equals its
   definition as a function of the inputs; along the math, each member of a cut
   equals the cut; hence each result of the text equals the math's. The pairing is a
   guess and needs no trust: a wrong pair is an obligation the kernel refuses.

A result whose two sides differ at the random point (beyond float64 rounding) is
**REFUTED** at once, naming the first value of the text with no counterpart in the
math, where an edit of the file shows. A result whose obligations the kernel cannot
prove is **UNKNOWN**.

A result the kernel proves only under a side condition (off a kink: ``u != 0``) is
**UNKNOWN**, naming the condition: the tie rests on none. "Except on a set of measure
zero" says nothing of the inputs training feeds, which are not drawn from a density:
biases and optimizer states start at exactly 0, targets are 0.01 and 0.91, pixels whole
numbers, drop-path masks 0 or 1/keep, and an edit that fires on such a set is met every
step (RT-27: ``head/b += [y[0,0] == 0.91]``, off ``y[0,0] - 91/100 != 0``; RT-29: where
every relu output of a pool window is 0; RT-30: where a drop mask drops example 0).
The importers read both programs alike (a maximum as ``a [a - b > 0] + b [a - b <= 0]``
on both sides), so the nets tie with no side condition at all.

A result computed from a division, log or root of the text that is not shown inside its
domain for every input meeting the step's preconditions is **UNKNOWN** as well
(``domains``): the reading's ``1/0 = 0`` is not XLA's inf.

4. *XLA* (``xla_check``). The kernel's claim is about the importer's reading of the
   text; XLA runs the text itself. So the exact text is compiled by XLA (on the CPU,
   in float32) and run at random inputs (two draws: parameters as an initializer
   draws them, the data standard normal and then four times wider), and every
   result is compared with the certified math evaluated in float64 at the same
   inputs. A result further than ``XLA_TOL`` (relative to the result's largest
   entry; float32 rounding of these steps is about 1e-6) is **REFUTED**: an
   operation runs differently from how it was read. Two things excuse a
   disagreement as float32's own: JAX's float32 execution of the certified math
   being off the float64 math by at least a quarter as much (``NOISE``: a wide
   softmax), and, drawn again, a kink (a ReLU mask or a maximum decided within
   float32 rounding, ``KINK``).

An obligation of more than ``OBLIGATION_LIMIT`` subterms is not attempted (a tied
step's have at most about 70): past an edit, the text's values without a counterpart
are inlined into their users, and one obligation can hold the rest of the step.

Only the kernel's theorems are trusted; the importers are checked by translation
validation (``verigrad.frontends.stablehlo_check``, ``verigrad.certify.validate``)
and the composition is the induction above. Float32 literals are read as the shortest
decimal that rounds to them on both sides, so the claim is about those constants.

``ensure_tied(DIR)`` is what ``verigrad train DIR`` runs first: it reads each module's
bytes once, checks them against the manifest's sha256, ties exactly those bytes, and
returns the manifest with those texts pinned for the trainer; anything else is
``NotTied``, one line.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from verigrad.certify.vectorized import Vectorized
from verigrad.kernel import Add, Failure, Lamda, RealCond, Theorem, Var, prove_equal, refl, subst

from .domains import outside_domain, preconditions
from .pairing import close, pair
from .programs import Program, Value, dag_size, over
from verigrad.errors import VerigradError

POSITIVE = ("opt_state", "lr", "bias_correction1", "bias_correction2")
REFUTE = 1e-6       # a result this far from the math (relative) is refuted outright
UNFOLD = 8          # cut definitions an obligation may look through
XLA_TOL = 3e-5      # XLA (float32) against the math (float64), relative to the result's largest entry
XLA_SCALES = (1.0, 4.0)     # the XLA check's draws: the data standard normal, then four times wider
NOISE = 4           # a disagreement within 4x JAX's own float32 error of the math is float32's
KINK = 1e-5         # an indicator's argument this close to 0 (relative) may flip in float32
REDRAWS = 4         # draws near a kink replaced, at most, per module
OBLIGATION_LIMIT = 500      # subterms of an obligation's two sides; a tied step's have at most about 70


@dataclass
class Obligation:
    lhs: object
    rhs: object
    what: str                 # where the two sides come from


@dataclass
class ResultTie:
    """The tie of one result of ``@main``: CHECKED, REFUTED or UNKNOWN."""
    name: str
    status: str
    reason: str = ""
    obligations: int = 0

    def as_dict(self) -> dict:
        d = {"status": self.status, "obligations": self.obligations}
        if self.reason:
            d["reason"] = self.reason
        return d


@dataclass
class TieReport:
    """The tie of one module: a ``ResultTie`` per result of ``@main``."""
    results: list
    cuts: int
    obligations: int          # proved by the kernel (each distinct obligation once)
    kernel_seconds: float
    seconds: float
    xla: dict = field(default_factory=dict)   # the XLA check: draws, largest error, seconds
    point: tuple | None = field(default=None, repr=False)   # (seed, inputs, the math's values) of the random point

    @property
    def ok(self) -> bool:
        return all(r.status == "CHECKED" for r in self.results)

    def failures(self) -> list:
        return [r for r in self.results if r.status != "CHECKED"]


def random_inputs(program: Program, seed: int = 0, positive=(), scale=1.0) -> dict:
    """Normal inputs of standard deviation ``scale`` (a number, or one per input name);
    ``|N| + 0.1`` for those named in ``positive`` (AdamW's second moments and bias
    corrections: a square root of a negative reads 0, which would hide the constants
    around it). Every value is a float32 (rounded), so XLA runs the module at exactly
    these inputs."""
    rng = np.random.default_rng(seed)
    out = {}
    for v in program.inputs:
        x = rng.standard_normal(tuple(int(s.const_value()) for s in v.shape))
        std = scale.get(v.name, 1.0) if isinstance(scale, dict) else scale
        x = np.abs(x) + 0.1 if v.name in positive else x * std
        out[v] = x.astype(np.float32).astype(np.float64)
    return out


def tie_programs(text: Program, math: Program, names, seed: int = 0, progress=None, positive=(),
                 scale=1.0, signs=None) -> TieReport:
    """Tie ``text`` (the emitted module) to ``math`` (the JAX function), result by
    result; ``names`` names the results, ``progress(done, total)`` is told as it goes,
    ``positive`` names inputs drawn positive, ``scale`` the standard deviation of the
    others (``random_inputs``), ``signs`` the inputs' signs the step may rest on
    (``domains.preconditions``: a result computed from a partial operation not shown
    inside its domain is UNKNOWN)."""
    t0 = time.perf_counter()
    if tuple(text.inputs) != tuple(math.inputs):
        raise ValueError("the two programs take different inputs")
    if len(text.results) != len(math.results):
        raise ValueError(f"the text has {len(text.results)} results, the math {len(math.results)}")
    inputs = random_inputs(text, seed, positive, scale)
    env_t, env_m = text.evaluate(inputs), math.evaluate(inputs)
    induction = _Induction(text, math, pair(text, env_t, math, env_m, seed + 1), env_t)
    outside = outside_domain(text, env_t, signs or {})
    out = []
    for k, (name, rt, rm) in enumerate(zip(names, text.results, math.results)):
        a, b = _value(rt, env_t), _value(rm, env_m)
        if not close(a, b, REFUTE):
            out.append(ResultTie(name, "REFUTED", _refutation(a, b, induction.blame(rt))))
        elif outside.reaches(rt):
            out.append(ResultTie(name, "UNKNOWN", outside.reason))
        else:
            out.append(induction.result(name, rt, rm))
        if progress:
            progress(k + 1, len(names))
    return TieReport(out, len(induction.reps), induction.proved, induction.seconds, time.perf_counter() - t0,
                     point=(seed, inputs, env_m))


class _Induction:
    """The obligations of a pairing, proved on demand, and what each result rests on.

    ``cut`` maps each paired value (of either program) to its cut, a value of the
    text. Every other value is inlined into its users, so each definition is written
    over inputs and cuts (``defn``), and users see a cut as its variable (``term``).
    """

    def __init__(self, text: Program, math: Program, cut: dict, env: dict | None = None):
        self.text, self.cut, self.env = text, cut, env
        self.reps = set(cut.values())
        self.pos = {v.var: k for k, v in enumerate(text.values)}
        self.where = {v.var: v.where for p in (text, math) for v in p.values}
        self.term_t, self.defn = _expand(text, cut)
        self.term_m, defn_m = _expand(math, cut)
        self.obligations: dict = {}              # cut -> [Obligation]: its members
        for prog, defn in ((text, self.defn), (math, defn_m)):
            for v in prog.values:
                rep = cut.get(v.var)
                if rep is not None and v.var is not rep:
                    lhs = self._before(defn[v.var], self.pos[rep], {})
                    self.obligations.setdefault(rep, []).append(
                        Obligation(lhs, self.defn[rep], f"{self.where[v.var]} against {self.where[rep]}"))
        self.deps = {rep: self.cuts(self.defn[rep]).union(*(self.cuts(ob.lhs) for ob in self.obligations.get(rep, ())))
                     for rep in self.reps}
        self.cache: dict = {}
        self.proved, self.seconds = 0, 0.0

    def cuts(self, term) -> set:
        return {a for a in term.atoms if a in self.reps}

    def _before(self, term, limit: int, memo: dict):
        """``term`` with every cut made at or after position ``limit`` replaced by its
        definition, recursively: a member may be written in terms of its own cut
        (``c + 0 * p``), and the induction may only use cuts made before."""
        late = {a for a in term.atoms if self.pos.get(a, -1) >= limit}
        if not late:
            return term
        for a in late - memo.keys():
            memo[a] = self._before(self.defn[a], limit, memo)
        return subst(term, {a: memo[a] for a in late})

    def prove(self, ob: Obligation):
        key = (ob.lhs, ob.rhs)
        hit = self.cache.get(key)
        if hit is None:
            t = time.perf_counter()
            size = dag_size(ob.lhs, OBLIGATION_LIMIT) + dag_size(ob.rhs, OBLIGATION_LIMIT)
            if size > OBLIGATION_LIMIT:
                # Values of the text with no counterpart in the math are inlined into their
                # users: past an edit, one obligation can hold the rest of the step, which
                # the normal form cannot take in reasonable time or memory.
                hit = Failure(f"it has more than {OBLIGATION_LIMIT} subterms ({size}): the text has no counterpart "
                              "in the math for the values in between, so it was not attempted")
            else:
                hit = self._prove(ob.lhs, ob.rhs)
                self.proved += 1
            self.cache[key] = hit
            self.seconds += time.perf_counter() - t
        return hit

    def _prove(self, lhs, rhs):
        """``lhs = rhs`` by the kernel; if the normal forms differ, unfold cuts one at
        a time, the latest first and those on one side only before the others: a cut
        may hide what makes the sides equal (``x^3`` against ``c * x`` where ``c`` is
        the cut ``x * x``). A cut is made before what it is unfolded in, so its
        definition is what the induction allows in its place."""
        if lhs is rhs:
            return refl(lhs)
        first = result = prove_equal(lhs, rhs)
        for _ in range(UNFOLD):
            if isinstance(result, Theorem):
                return result
            left, right = self.cuts(lhs), self.cuts(rhs)
            if not (left | right):
                break
            c = max((left ^ right) or (left | right), key=self.pos.get)
            lhs, rhs = subst(lhs, {c: self.defn[c]}), subst(rhs, {c: self.defn[c]})
            result = prove_equal(lhs, rhs)
        return result if isinstance(result, Theorem) else first

    def result(self, name: str, rt, rm) -> ResultTie:
        """Prove ``rt = rm`` over cuts, then every obligation of every cut it rests on."""
        top = Obligation(over(rt, self.term_t), over(rm, self.term_m), f"result {name}")
        cone, stack = set(), list(self.cuts(top.lhs) | self.cuts(top.rhs))
        while stack:
            c = stack.pop()
            if c not in cone:
                cone.add(c)
                stack.extend(self.deps[c])
        todo = [top] + [ob for c in sorted(cone, key=self.pos.get) for ob in self.obligations.get(c, ())]
        for ob in todo:
            th = self.prove(ob)
            if isinstance(th, Failure):
                return ResultTie(name, "UNKNOWN", f"the kernel could not prove {ob.what}: {th.reason}", len(todo))
            if th.conds:
                c = min(th.conds, key=str)
                return ResultTie(name, "UNKNOWN", f"the kernel proved {ob.what} only under the side condition "
                                 f"{self.condition(c)}: the tie rests on none (the inputs training feeds, zeros, "
                                 "labels, masks, meet a set of measure zero every step)", len(todo))
        return ResultTie(name, "CHECKED", obligations=len(todo))

    def condition(self, c) -> str:
        """A side condition in words, naming where its cuts come from."""
        legend = ", ".join(f"{v.name} = {self.where[v]}" for v in sorted(self.cuts(c.term), key=self.pos.get))
        return str(c) + (f" where {legend}" if legend else "")

    def blame(self, result) -> Value | None:
        """Where a refuted result goes wrong: walking back from it through the values
        of the text without a counterpart in the math, the earliest whose own operands
        all have one (an edited operation shows there). One that combines a value the
        math has is preferred to one made of inputs alone (a broadcast of the learning
        rate that the math writes another way is no departure)."""
        values = {v.var: v for v in self.text.values}
        seen, stack, frontier = set(), [result] if isinstance(result, Var) else [], []
        while stack:
            var = stack.pop()
            if var in seen or var not in values or var in self.cut:
                continue
            seen.add(var)
            ops = [a for a in values[var].definition.atoms if a in values]
            if all(a in self.cut for a in ops):
                frontier.append(var)
            stack.extend(ops)
        combining = [v for v in frontier if any(a in self.cut for a in values[v].definition.atoms)]
        return values[min(combining or frontier, key=self.pos.get)] if frontier else None


def _expand(program: Program, cut: dict):
    """``(term, defn)`` for each value: ``defn`` its definition over inputs and cuts,
    ``term`` what its users see (the cut's variable, or ``defn`` inlined)."""
    term, defn = {}, {}
    for v in program.values:
        defn[v.var] = over(v.definition, term)
        term[v.var] = cut.get(v.var, defn[v.var])
    return term, defn


def _value(t, env) -> np.ndarray:
    if isinstance(t, Var):
        return np.asarray(env[t], dtype=np.float64)
    return Vectorized({}, env).tensor(t)


def _refutation(a, b, origin) -> str:
    k = np.unravel_index(int(np.argmax(np.abs(a - b))), a.shape) if a.size > 1 else ()
    at = f" at [{', '.join(map(str, k))}]" if k else ""
    msg = (f"differs from the certified math at random inputs: the text gives {float(a[k]):.6g}{at}, "
           f"the math {float(b[k]):.6g}")
    if origin is not None:
        msg += f"; the text departs from the math at {origin.where}"
    return msg


# -- a rendered directory -----------------------------------------------------------------------------


@dataclass
class Tie:
    """The tie of both modules of a rendered step."""
    modules: dict                    # "train_step" / "forward" -> TieReport
    sizes: dict

    @property
    def status(self) -> str:
        statuses = {r.status for rep in self.modules.values() for r in rep.results}
        for s in ("REFUTED", "UNKNOWN"):
            if s in statuses:
                return s
        return "CHECKED"

    @property
    def ok(self) -> bool:
        return self.status == "CHECKED"

    def failures(self) -> list:
        return [(key, r) for key, rep in self.modules.items() for r in rep.failures()]

    def summary(self) -> str:
        if self.ok:
            n = sum(len(rep.results) for rep in self.modules.values())
            return f"CHECKED: all {n} results equal the certified math at the rendered sizes"
        key, r = self.failures()[0]
        more = len(self.failures()) - 1
        return (f"{r.status}: {key} result {r.name}: {r.reason}"
                + (f" (and {more} more result{'s' if more > 1 else ''})" if more else ""))

    def certificate(self) -> dict:
        """The manifest's ``certificates.render_tie`` entry."""
        return {
            "status": self.status,
            "claim": "each result of @main equals the JAX step (forward, loss, certified backward, update) "
                     "for all inputs, at the rendered sizes; float32 literals read as their shortest decimals",
            "by": "verigrad.render.tie: value-by-value kernel obligations over paired cuts, composed by congruence; "
                  "the text run by XLA against the math",
            "sizes": self.sizes,
            "xla": "each module compiled by XLA (CPU, float32) and run at random inputs; every result within "
                   f"{XLA_TOL:g} of the math in float64, relative to its largest entry",
            **{key: {"results": {r.name: r.as_dict() for r in rep.results}, "cuts": rep.cuts,
                     "obligations": rep.obligations, "kernel_seconds": round(rep.kernel_seconds, 3),
                     "seconds": round(rep.seconds, 3), "xla_check": rep.xla} for key, rep in self.modules.items()},
        }


def trace(fn, structs):
    """The closed jaxpr of ``fn`` at ``structs``: the certified math, traced in float32."""
    import jax
    return jax.jit(fn, keep_unused=True).trace(*structs).jaxpr


def tie_module(text: str, path: str, fn, inputs: list, outputs: list, seed: int = 0, progress=None,
               signs=None) -> TieReport:
    """Tie the text of one module to the JAX function ``fn`` it was rendered from;
    ``inputs`` / ``outputs`` are the manifest's ports, ``signs`` the inputs' signs it may
    rest on (``domains.preconditions``). The kernel's tie, then XLA's execution of the
    same text against the math (``xla_check``)."""
    from verigrad.frontends.stablehlo import StableHLOError, parse, signature
    from .programs import jaxpr_program, stablehlo_program
    import jax
    import jax.numpy as jnp
    t0 = time.perf_counter()
    structs = [jax.ShapeDtypeStruct(tuple(p["shape"]), jnp.float32) for p in inputs]
    parsed = parse(text, path)
    names = [p["name"] for p in outputs]
    positive = [p["name"] for p in inputs if p["role"] in POSITIVE]
    try:
        text_prog = stablehlo_program(parsed, [p["name"] for p in inputs])
    except StableHLOError as e:         # an operation the importer refuses: nothing proved, XLA still asked
        why = " ".join(str(e).split())
        sig = signature(parsed)
        if [s.shape for s in sig.inputs] != [tuple(p["shape"]) for p in inputs] or len(sig.outputs) != len(names):
            raise
        math_prog = jaxpr_program(trace(fn, structs), tuple(Var(p["name"], tuple(p["shape"])) for p in inputs))
        out = TieReport([ResultTie(n, "UNKNOWN", f"the importer refuses the text: {why}") for n in names], 0, 0,
                        0.0, time.perf_counter() - t0)
        xla_check(text, path, None, math_prog, out, seed, positive, [check_scales(inputs, w) for w in XLA_SCALES])
        out.seconds = time.perf_counter() - t0
        return out
    math_prog = jaxpr_program(trace(fn, structs), text_prog.inputs)
    report = None if progress is None else (lambda done, total: progress(f"tie {path}", done, total))
    out = tie_programs(text_prog, math_prog, names, seed, report, positive, check_scales(inputs, XLA_SCALES[0]),
                       signs)
    if math_prog.assumptions:           # a narrowing cast, an integer range: the tie's vocabulary is exact
        why = "; ".join(math_prog.assumptions)
        for r in out.results:
            if r.status == "CHECKED":
                r.status, r.reason = "UNKNOWN", f"the certified math's reading rests on assumptions: {why}"
    t0 = time.perf_counter()
    own: list = []

    def reference(arrays):              # JAX's float32 execution of the certified math, compiled when first asked
        if not own:
            own.append(jax.jit(fn, keep_unused=True))
        return jax.tree_util.tree_leaves(own[0](*arrays))
    xla_check(text, path, text_prog, math_prog, out, seed, positive,
              [check_scales(inputs, w) for w in XLA_SCALES], reference)
    out.seconds += time.perf_counter() - t0
    return out


# -- XLA runs the text ------------------------------------------------------------------------------


def compile_for_check(text: str, names: list, path: str):
    """The text compiled by XLA on the CPU (float32 as written: a GPU may run float32
    products in TF32). Where the CPU is the default device this is the executable
    ``verigrad.run.backend.compile`` caches, so training reuses the one checked."""
    import jax
    from verigrad.run import backend as B
    if jax.default_backend() == "cpu":
        return B.compile(text, "xla", names, path)
    sig = B.signature(B.parse(text, path))
    return B.XlaExecutable(text, sig, names, device=jax.local_devices(backend="cpu")[0])


def check_scales(inputs: list, wide: float = 1.0) -> dict:
    """The standard deviation of each input in the XLA check's draws: a parameter of
    rank >= 2 ``1 / sqrt(fan-in)`` (as an initializer draws it: activations stay of
    order 1, so float32 rounds them no worse than it does in training), other inputs
    1, times ``wide`` for the data (``batch_x``, ``batch_y``, masks)."""
    out = {}
    for p in inputs:
        shape = p["shape"]
        if p["role"] == "param":
            out[p["name"]] = 1.0 / np.sqrt(float(np.prod(shape[:-1]))) if len(shape) >= 2 else 1.0
        else:
            out[p["name"]] = wide
    return out


def xla_check(text: str, path: str, text_prog: Program | None, math_prog: Program, report: TieReport, seed: int = 0,
              positive=(), scales=None, reference=None) -> None:
    """Run the text with XLA at random inputs and compare every result with the math
    in float64; a result that differs is REFUTED (UNKNOWN where XLA cannot run the
    text). Records what it did in ``report.xla``. ``text_prog`` (the importer's
    reading, ``None`` where it refused the text) adds its kinks to the redraw test.

    ``scales`` (one ``{input: std}`` per draw, default ``XLA_SCALES`` for every input)
    set the draws; the first is the kernel's random point (``report.point``) where
    there is one. A disagreement is excused only as float32 rounding: where
    ``reference(float32 arrays)`` (JAX's own float32 execution of the certified math)
    is off the float64 math by at least a ``1 / NOISE`` share of it, or, redrawn, next
    to a kink."""
    from verigrad.frontends.stablehlo import StableHLOError
    from verigrad.run.backend import to_host
    t0 = time.perf_counter()
    variables = (text_prog or math_prog).inputs        # the same variables (the text's may be refused: None)
    names = [v.name for v in variables]
    try:
        exe = compile_for_check(text, names, path)
    except StableHLOError as e:
        for r in report.results:
            if r.status == "CHECKED":
                r.status, r.reason = "UNKNOWN", f"XLA could not run the text: {e}"
        report.xla = {"status": "UNKNOWN", "reason": str(e)}
        return
    scales = [{n: s for n in names} for s in XLA_SCALES] if scales is None else scales
    draws, worst, redrawn, excused, refuted = 0, 0.0, 0, 0, {}
    pending = [(seed + 1000 + k, sc, None) for k, sc in enumerate(scales)]
    if report.point is not None:                # the kernel's random point (drawn at the first scales)
        pending[0] = (report.point[0], scales[0], report.point)
    while pending:
        draw_seed, sc, point = pending.pop(0)
        if point is not None:                   # its math already evaluated
            _, inputs, env_m = point
        else:
            inputs = random_inputs(text_prog or math_prog, draw_seed, positive, sc)
            env_m = None
        arrays = [inputs[v].astype(np.float32) for v in variables]
        got = [np.asarray(to_host(x), dtype=np.float64) for x in exe(*arrays)]
        env_m = math_prog.evaluate(inputs) if env_m is None else env_m
        want = [_value(rm, env_m) for rm in math_prog.results]
        errors = {k: _xla_error(g, w) for k, (g, w) in enumerate(zip(got, want))}
        bad = {k: e for k, e in errors.items() if not e[0] <= XLA_TOL}
        if bad and reference is not None:      # float32 itself, at these inputs?
            own = [np.asarray(x, dtype=np.float64) for x in reference(arrays)]
            noise = {k: _xla_error(own[k], want[k])[0] for k in bad}
            excused += sum(1 for k in bad if bad[k][0] <= NOISE * noise[k])
            bad = {k: e for k, e in bad.items() if not e[0] <= NOISE * noise[k]}
        if bad and redrawn < REDRAWS and min(
                _kink_margin(math_prog, env_m),
                np.inf if text_prog is None else _kink_margin(text_prog, text_prog.evaluate(inputs))) < KINK:
            redrawn += 1                    # within float32 rounding of a kink: another draw
            pending.append((draw_seed + 100, sc, None))
            continue
        draws += 1
        worst = max([worst] + [e[0] for e in errors.values() if np.isfinite(e[0])])
        for k, (err, at, x, w) in bad.items():
            refuted.setdefault(k, (draw_seed, err, at, x, w))
    for k, (draw_seed, err, at, x, w) in refuted.items():
        r = report.results[k]
        if r.status == "REFUTED":
            continue
        where_ = f" at [{', '.join(map(str, at))}]" if at else ""
        read = (" (the kernel checked the importer's reading of the text, so an operation runs differently from "
                "how it is read)") if r.status == "CHECKED" else f"; {r.reason}" if r.reason else ""
        r.status, r.reason = "REFUTED", (
            f"XLA's execution of the text differs from the certified math at random inputs (seed {draw_seed}): "
            f"XLA gives {x:.6g}{where_}, the math {w:.6g} (error {err:.3g} of the result's largest entry, "
            f"tolerance {XLA_TOL:g}){read}")
    report.point = None                         # the arrays are not kept
    report.xla = {"status": "REFUTED" if refuted else "AGREES", "device": "cpu", "draws": draws,
                  "redrawn": redrawn,
                  "excused_as_float32": excused, "max_error": float(worst), "tolerance": XLA_TOL,
                  "seconds": round(time.perf_counter() - t0, 3)}


def _xla_error(got: np.ndarray, want: np.ndarray):
    """``(error, index, got, want)``: the largest ``|got - want|`` relative to the
    largest entry of either; a non-finite entry on one side only is an infinite
    error."""
    if got.shape != want.shape:
        return float("inf"), (), float("nan"), float("nan")
    if got.size == 0:
        return 0.0, (), 0.0, 0.0
    scale = max(float(np.max(np.abs(np.where(np.isfinite(want), want, 0.0)))),
                float(np.max(np.abs(np.where(np.isfinite(got), got, 0.0)))))
    diff = np.abs(got - want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    diff = np.where(same, 0.0, np.where(np.isfinite(diff), diff, np.inf))
    k = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    if scale > 0:
        err = float(diff[k]) / scale
    else:
        err = float("inf") if diff[k] > 0 else 0.0
    return err, tuple(int(i) for i in k), float(got[k]), float(want[k])


def _kink_margin(program: Program, env: dict) -> float:
    """How close the inputs come to a kink: the smallest ``|u|`` over the arguments
    ``u`` of the indicators ``[u > 0]`` of ``program`` (an exact 0 excepted: that is
    the tie of a maximum with itself), relative to the largest ``|u|`` and the
    largest of the terms ``u`` sums. Below ``KINK``, float32 may decide the indicator
    the other way."""
    from .pairing import subterms
    margin = np.inf
    ev = Vectorized({}, env)
    seen = set()
    for v in program.values:
        for rc in subterms(v.definition, RealCond):
            if rc.t in seen:
                continue
            seen.add(rc.t)
            idx = sorted(rc.t.free_idx, key=lambda i: i.name)
            parts = rc.t.terms if isinstance(rc.t, Add) else (rc.t,)
            try:
                u = ev.tensor(Lamda(idx, rc.t) if idx else rc.t)
                scale = max(float(np.max(np.abs(ev.tensor(Lamda(idx, p) if idx else p)), initial=0.0))
                            for p in parts)
            except Exception:   # noqa: BLE001 - a term the evaluator cannot take: no margin known
                continue
            scale = max(scale, float(np.max(np.abs(u), initial=0.0)))
            small = np.abs(u[u != 0]) if u.ndim else (np.abs([u]) if u != 0 else np.array([]))
            if scale > 0 and small.size:
                margin = min(margin, float(np.min(small)) / scale)
    return margin


def tie_files(directory, net, cfg, layout, progress=None, texts=None, files=None) -> Tie:
    """Tie ``train_step.mlir`` and ``forward.mlir`` in ``directory`` (or the files named
    in ``files``, ``{"train_step": name, "forward": name}``) to the step of ``net`` under
    ``cfg``; ``texts`` (``{"train_step": ..., "forward": ...}``) are the files' contents
    when already read."""
    from pathlib import Path
    from . import step as S
    from .emit import FILES
    directory = Path(directory)
    modules = {}
    for key, fn, ins, outs in (("train_step", S.train_step(net, cfg, layout), layout.step_inputs, layout.step_outputs),
                               ("forward", S.forward(net, cfg, layout), layout.forward_inputs, layout.forward_outputs)):
        path = directory / (files or FILES)[key]
        text = texts[key] if texts is not None else path.read_text()
        modules[key] = tie_module(text, str(path), fn, ins, outs, progress=progress, signs=preconditions(cfg, ins))
    sizes = {"batch": cfg.batch, "params": {p.name: [int(d) for d in p.shape] for p in net.params}}
    return Tie(modules, sizes)


def tie_directory(directory, net=None, progress=None, manifest=None) -> Tie:
    """Tie a rendered directory: read ``manifest.json`` (which checks the files'
    sha256), rebuild the step from its ``render`` entry (or use ``net``), check the
    layout matches, and tie both modules. With ``manifest`` (a loaded one whose texts
    are pinned), tie those texts."""
    from pathlib import Path
    from verigrad.run.manifest import ManifestError, load
    from . import step as S
    # The texts tied are always the manifest's files, read once and pinned: what the
    # trainer runs. (Tied again by name, ``train_step.mlir`` was reported CHECKED while the
    # manifest's ``train_step.file`` named another, edited file: red team RT-47-h4.)
    m = manifest if manifest is not None else load(directory).pin()
    render = m.raw.get("render")
    if not isinstance(render, dict):
        raise ManifestError(f"{Path(directory) / 'manifest.json'}: render: missing (not rendered by verigrad render)")
    cfg = S.Config.from_dict(render)
    net = net if net is not None else S.build_network(cfg)
    layout = S.layout(net, cfg)
    for key, ins, outs in (("train_step", layout.step_inputs, layout.step_outputs),
                           ("forward", layout.forward_inputs, layout.forward_outputs)):
        spec = getattr(m, key)
        got = [(p.name, list(p.shape or [])) for p in spec.inputs]
        want = [(p["name"], p["shape"]) for p in ins]
        if got != want:
            raise ManifestError(f"{Path(directory) / 'manifest.json'}: {key}.inputs differ from the network's layout "
                                f"(first difference: {next((g, w) for g, w in zip(got + [None] * len(want), want) if g != w)})")
        if [p.name for p in spec.outputs] != [p["name"] for p in outs]:
            raise ManifestError(f"{Path(directory) / 'manifest.json'}: {key}.outputs differ from the network's layout")
    differs = _configuration_differs(m, net, cfg, layout)
    if differs:
        raise ManifestError(f"{Path(directory) / 'manifest.json'}: {differs}")
    texts = {key: m.text(getattr(m, key)) for key in ("train_step", "forward")}
    files = {key: getattr(m, key).file for key in ("train_step", "forward")}
    return tie_files(directory, net, cfg, layout, progress, texts, files)


def _configuration_differs(m, net, cfg, layout) -> str | None:
    """What of the manifest the trainer reads differs from the step the tie rebuilds from
    its ``render`` entry (None: nothing). The tie proves the text against the step of
    ``render``, but the trainer feeds the text from the manifest's other fields: AdamW's
    bias corrections from ``optimizer.betas``, the targets from ``label_smoothing``, each
    drop mask from its port's ``keep``, the initial values from ``params[].init``. An
    edited one of those was tied and trained (red team RT-46-e2: betas [0.5, 0.5] made
    the first AdamW step 4.47x the rendered optimizer's), so each must be the render's."""
    from .optimizers import hyperparameters
    # (the render entry's optimizer is one ``hyperparameters`` accepts: RT-46-e3's
    # ``nesterov: false`` is refused there, as the step computes Nesterov's update)
    optimizer = hyperparameters(cfg.optimizer.get("name"), **{k: v for k, v in cfg.optimizer.items() if k != "name"})
    if optimizer != dict(cfg.optimizer):
        return f"render.optimizer is {dict(cfg.optimizer)!r}, not a complete optimizer entry ({optimizer!r})"
    want = {"batch": cfg.batch, "optimizer": optimizer, "label_smoothing": float(cfg.label_smoothing),
            "drop_path": float(cfg.drop_path)}
    got = {"batch": m.batch, "optimizer": dict(m.optimizer), "label_smoothing": float(m.label_smoothing),
           "drop_path": float(m.drop_path)}
    for key in want:
        if got[key] != want[key]:
            return f"{key} is {got[key]!r}, but the step was rendered (and is tied) with {want[key]!r}"

    def port(p):
        return (p["name"], p["role"], tuple(p["shape"]), p["dtype"], p.get("keep"))

    for key, ins, outs in (("train_step", layout.step_inputs, layout.step_outputs),
                           ("forward", layout.forward_inputs, layout.forward_outputs)):
        spec = getattr(m, key)
        for k, (p, q) in enumerate(zip(spec.inputs, ins)):
            if (p.name, p.role, tuple(p.shape), p.dtype, p.keep) != port(q):
                return f"{key}.inputs[{k}] ({p.name}) is {p.role} keep={p.keep}, the rendered step's " \
                       f"{q['role']} keep={q.get('keep')}"
        for k, (p, q) in enumerate(zip(spec.outputs, outs)):
            if (p.name, p.role) != (q["name"], q["role"]):
                return f"{key}.outputs[{k}] ({p.name}) has role {p.role}, the rendered step's {q['role']}"
    declared = [(p.name, tuple(p.shape), p.init, bool(p.decay)) for p in m.params]
    rendered = [(f"params/{p.name}", tuple(int(d) for d in p.shape), str(p.init), bool(p.decay)) for p in net.params]
    if declared != rendered:
        first = next((d, r) for d, r in zip(declared + [None] * len(rendered), rendered + [None] * len(declared))
                     if d != r)
        return f"params differ from the rendered network's (first difference: {first[0]} against {first[1]})"
    return None


class NotTied(VerigradError, RuntimeError):
    """A rendered directory whose files do not (provably) denote the certified math;
    the message is one line."""


def ensure_tied(directory, progress=None):
    """The manifest of ``directory`` with its modules' texts pinned, once those exact
    bytes are tied; else ``NotTied`` naming why, in one line.

    Each module is read once: its bytes are hashed (against the manifest's sha256),
    tied, and are what ``Manifest.text`` returns afterwards, so the trainer compiles
    the bytes that were tied (and, on the CPU, the very executable the XLA check ran).
    A later change may replay a stored proof trace of the tie here instead."""
    from pathlib import Path
    from verigrad.frontends.jaxpr import JaxprImportError
    from verigrad.frontends.stablehlo import StableHLOError
    from verigrad.kernel import KernelError
    from verigrad.run.manifest import ManifestError, load
    directory = Path(directory)
    try:
        m = load(directory)
        m.pin()
        if not isinstance(m.raw.get("render"), dict):
            raise NotTied(f"{directory}: not rendered by `verigrad render` (manifest.json has no render entry), so "
                          "there is no certified math to tie it to; only tied text is trained")
        tie = tie_directory(directory, progress=progress, manifest=m)
    except NotTied:
        raise
    except (ManifestError, StableHLOError, JaxprImportError, KernelError, ValueError, KeyError, TypeError,
            OSError) as e:
        raise NotTied(_one_line(f"{directory}: not tied: {e}")) from None
    if not tie.ok:
        raise NotTied(_one_line(f"{directory}: the render tie of these files failed, so they are not trained: "
                                f"{tie.summary()}"))
    return m


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


__all__ = ["tie_programs", "TieReport", "ResultTie", "Tie", "tie_module", "tie_files", "tie_directory",
           "trace", "random_inputs", "xla_check", "ensure_tied", "NotTied", "XLA_TOL"]
