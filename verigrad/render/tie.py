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
prove is **UNKNOWN**. The side conditions of the theorems used (ReLU's kink, a
divisor off zero) are reported with the result, naming the values they are about.

Only the kernel's theorems are trusted; the importers are checked by translation
validation (``verigrad.frontends.stablehlo_check``, ``verigrad.certify.validate``)
and the composition is the induction above. Float32 literals are read as the shortest
decimal that rounds to them on both sides, so the claim is about those constants.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from verigrad.certify.vectorized import Vectorized
from verigrad.kernel import Failure, Theorem, Var, prove_equal, refl, subst

from .pairing import close, pair
from .programs import Program, Value

POSITIVE = ("opt_state", "lr", "bias_correction1", "bias_correction2")
REFUTE = 1e-6       # a result this far from the math (relative) is refuted outright
UNFOLD = 8          # cut definitions an obligation may look through


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
    conditions: list = field(default_factory=list)   # side conditions, in words

    def as_dict(self) -> dict:
        d = {"status": self.status, "obligations": self.obligations}
        if self.reason:
            d["reason"] = self.reason
        if self.conditions:
            d["conditions"] = self.conditions
        return d


@dataclass
class TieReport:
    """The tie of one module: a ``ResultTie`` per result of ``@main``."""
    results: list
    cuts: int
    obligations: int          # proved by the kernel (each distinct obligation once)
    kernel_seconds: float
    seconds: float

    @property
    def ok(self) -> bool:
        return all(r.status == "CHECKED" for r in self.results)

    def failures(self) -> list:
        return [r for r in self.results if r.status != "CHECKED"]


def random_inputs(program: Program, seed: int = 0, positive=()) -> dict:
    """Standard normal inputs; ``|N| + 0.1`` for those named in ``positive`` (AdamW's
    second moments and bias corrections: a square root of a negative reads 0, which
    would hide the constants around it)."""
    rng = np.random.default_rng(seed)
    out = {}
    for v in program.inputs:
        x = rng.standard_normal(tuple(int(s.const_value()) for s in v.shape))
        out[v] = np.abs(x) + 0.1 if v.name in positive else x
    return out


def tie_programs(text: Program, math: Program, names, seed: int = 0, progress=None, positive=()) -> TieReport:
    """Tie ``text`` (the emitted module) to ``math`` (the JAX function), result by
    result; ``names`` names the results, ``progress(done, total)`` is told as it goes,
    ``positive`` names inputs drawn positive."""
    t0 = time.perf_counter()
    if tuple(text.inputs) != tuple(math.inputs):
        raise ValueError("the two programs take different inputs")
    if len(text.results) != len(math.results):
        raise ValueError(f"the text has {len(text.results)} results, the math {len(math.results)}")
    inputs = random_inputs(text, seed, positive)
    env_t, env_m = text.evaluate(inputs), math.evaluate(inputs)
    induction = _Induction(text, math, pair(text, env_t, math, env_m, seed + 1))
    out = []
    for k, (name, rt, rm) in enumerate(zip(names, text.results, math.results)):
        a, b = _value(rt, env_t), _value(rm, env_m)
        if not close(a, b, REFUTE):
            out.append(ResultTie(name, "REFUTED", _refutation(a, b, induction.blame(rt))))
        else:
            out.append(induction.result(name, rt, rm))
        if progress:
            progress(k + 1, len(names))
    return TieReport(out, len(induction.reps), induction.proved, induction.seconds, time.perf_counter() - t0)


class _Induction:
    """The obligations of a pairing, proved on demand, and what each result rests on.

    ``cut`` maps each paired value (of either program) to its cut, a value of the
    text. Every other value is inlined into its users, so each definition is written
    over inputs and cuts (``defn``), and users see a cut as its variable (``term``).
    """

    def __init__(self, text: Program, math: Program, cut: dict):
        self.text, self.cut = text, cut
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
            hit = self.cache[key] = self._prove(ob.lhs, ob.rhs)
            self.seconds += time.perf_counter() - t
            self.proved += 1
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
        top = Obligation(_over(rt, self.term_t), _over(rm, self.term_m), f"result {name}")
        cone, stack = set(), list(self.cuts(top.lhs) | self.cuts(top.rhs))
        while stack:
            c = stack.pop()
            if c not in cone:
                cone.add(c)
                stack.extend(self.deps[c])
        todo = [top] + [ob for c in sorted(cone, key=self.pos.get) for ob in self.obligations.get(c, ())]
        conditions = set()
        for ob in todo:
            th = self.prove(ob)
            if isinstance(th, Failure):
                return ResultTie(name, "UNKNOWN", f"the kernel could not prove {ob.what}: {th.reason}", len(todo))
            conditions |= {self.condition(c) for c in th.conds}
        return ResultTie(name, "CHECKED", obligations=len(todo), conditions=sorted(conditions))

    def condition(self, c) -> str:
        """A side condition in words, naming where its cuts come from."""
        legend = ", ".join(f"{v.name} = {self.where[v]}" for v in sorted(self.cuts(c.term), key=self.pos.get))
        return str(c) + (f" where {legend}" if legend else "")

    def blame(self, result) -> Value | None:
        """Where a refuted result goes wrong: walking back from it through the values
        of the text without a counterpart in the math, the earliest whose own operands
        all have one (an edited operation shows there)."""
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
        return values[min(frontier, key=self.pos.get)] if frontier else None


def _expand(program: Program, cut: dict):
    """``(term, defn)`` for each value: ``defn`` its definition over inputs and cuts,
    ``term`` what its users see (the cut's variable, or ``defn`` inlined)."""
    term, defn = {}, {}
    for v in program.values:
        defn[v.var] = _over(v.definition, term)
        term[v.var] = cut.get(v.var, defn[v.var])
    return term, defn


def _over(t, term: dict):
    mapping = {a: term[a] for a in t.atoms if a in term and term[a] is not a}
    return subst(t, mapping) if mapping else t


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
            "by": "verigrad.render.tie: value-by-value kernel obligations over paired cuts, composed by congruence",
            "sizes": self.sizes,
            **{key: {"results": {r.name: r.as_dict() for r in rep.results}, "cuts": rep.cuts,
                     "obligations": rep.obligations, "kernel_seconds": round(rep.kernel_seconds, 3),
                     "seconds": round(rep.seconds, 3)} for key, rep in self.modules.items()},
        }


def trace(fn, structs):
    """The closed jaxpr of ``fn`` at ``structs``: the certified math, traced in float32."""
    import jax
    return jax.jit(fn, keep_unused=True).trace(*structs).jaxpr


def tie_module(text: str, path: str, fn, inputs: list, outputs: list, seed: int = 0, progress=None) -> TieReport:
    """Tie the text of one module to the JAX function ``fn`` it was rendered from;
    ``inputs`` / ``outputs`` are the manifest's ports."""
    from verigrad.frontends.stablehlo import parse
    from .programs import jaxpr_program, stablehlo_program
    import jax
    import jax.numpy as jnp
    structs = [jax.ShapeDtypeStruct(tuple(p["shape"]), jnp.float32) for p in inputs]
    parsed = parse(text, path)
    text_prog = stablehlo_program(parsed, [p["name"] for p in inputs])
    math_prog = jaxpr_program(trace(fn, structs), text_prog.inputs)
    report = None if progress is None else (lambda done, total: progress(f"tie {path}", done, total))
    positive = [p["name"] for p in inputs if p["role"] in POSITIVE]
    return tie_programs(text_prog, math_prog, [p["name"] for p in outputs], seed, report, positive)


def tie_files(directory, net, cfg, layout, progress=None) -> Tie:
    """Tie ``train_step.mlir`` and ``forward.mlir`` in ``directory`` to the step of
    ``net`` under ``cfg``."""
    from pathlib import Path
    from . import step as S
    from .emit import FILES
    directory = Path(directory)
    modules = {}
    for key, fn, ins, outs in (("train_step", S.train_step(net, cfg, layout), layout.step_inputs, layout.step_outputs),
                               ("forward", S.forward(net, cfg, layout), layout.forward_inputs, layout.forward_outputs)):
        path = directory / FILES[key]
        modules[key] = tie_module(path.read_text(), str(path), fn, ins, outs, progress=progress)
    sizes = {"batch": cfg.batch, "params": {p.name: [int(d) for d in p.shape] for p in net.params}}
    return Tie(modules, sizes)


def tie_directory(directory, net=None, progress=None) -> Tie:
    """Tie a rendered directory: read ``manifest.json`` (which checks the files'
    sha256), rebuild the step from its ``render`` entry (or use ``net``), check the
    layout matches, and tie both modules."""
    from pathlib import Path
    from verigrad.run.manifest import ManifestError, load
    from . import step as S
    m = load(directory)
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
    return tie_files(directory, net, cfg, layout, progress)


__all__ = ["tie_programs", "TieReport", "ResultTie", "Tie", "tie_module", "tie_files", "tie_directory",
           "trace", "random_inputs"]
