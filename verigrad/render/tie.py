r"""The render tie: the kernel checks that the emitted text denotes the certified math.

Two programs meet (``programs``): the text, interpreted op by op by the StableHLO
importer, and the JAX step function (forward, loss, certified backward, update),
interpreted primitive by primitive by the jaxpr importer, over the same input
variables. Claim: each result of ``@main`` equals the corresponding output of the JAX
function, for every value of the inputs, at the rendered sizes: **CHECKED**.

A flat proof (normal forms of whole results) is hopeless beyond a toy network: the
gradient of a first-layer weight, expanded, is the whole backward. So the tie proves
it value by value, the way a translation validator works:

1. *Pair.* Both programs are evaluated in float64 at one random point. A value of the
   text and a value of the math that agree there (same shape, same numbers) are a
   *pair*: the proposal that they are the same function of the inputs. Paired values
   share one variable, the *cut* ``c``.
2. *Prove.* For every member of a cut, the kernel proves its definition equals the
   cut's defining value of the text, both written over earlier cuts (values in
   between are inlined): a few operations a side. For every result, the kernel proves
   the text's result equals the math's, over cuts.
3. *Compose* (congruence). By induction along the programs, each member of a cut
   equals the text's defining value as a function of the inputs, hence each result of
   the text equals the math's. The pairing is a guess and needs no trust: a wrong pair
   is an obligation the kernel refuses.

A result whose two sides differ at the random point is **REFUTED** at once (no proof
is attempted), with the first value of the text that has no counterpart in the math,
which is where an edit of the file shows. A result whose obligations the kernel cannot
prove is **UNKNOWN**. Every theorem's side conditions (e.g. ReLU's kink) are kept.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from verigrad.kernel import Failure, Theorem, Var, prove_equal, subst

from .programs import Program, Value

RTOL = 1e-12         # pairing and refutation, relative to the scale of a value (float64 sums differ by ~1e-15)


@dataclass
class Obligation:
    lhs: object
    rhs: object
    what: str                 # where the two sides come from
    result: Theorem | Failure | None = None
    seconds: float = 0.0


@dataclass
class ResultTie:
    """The tie of one result of ``@main``."""
    name: str
    status: str                       # CHECKED, REFUTED or UNKNOWN
    reason: str = ""
    obligations: int = 0
    conditions: list = field(default_factory=list)

    def as_dict(self) -> dict:
        d = {"status": self.status, "obligations": self.obligations}
        if self.reason:
            d["reason"] = self.reason
        if self.conditions:
            d["conditions"] = self.conditions
        return d


@dataclass
class TieReport:
    results: list
    cuts: int
    obligations: int
    kernel_seconds: float
    seconds: float

    @property
    def ok(self) -> bool:
        return all(r.status == "CHECKED" for r in self.results)

    def failures(self) -> list:
        return [r for r in self.results if r.status != "CHECKED"]


# -- pairing --------------------------------------------------------------------------------------


TINY = 1e-9          # a value this small everywhere counts as zero (a cancelled sum)


def _scale(a: np.ndarray) -> float:
    return float(np.max(np.abs(a), initial=0.0))


def _close(a, b) -> bool:
    """Equal up to float64 rounding, relative to the larger of the two."""
    if a.shape != b.shape:
        return False
    scale = max(_scale(a), _scale(b))
    return float(np.max(np.abs(a - b), initial=0.0)) <= RTOL * scale if scale > TINY else True


class _Pairs:
    """Classes of numerically equal values (shape and every entry)."""

    def __init__(self, rng):
        self.probes: dict = {}
        self.rng = rng
        self.buckets: dict = {}          # shape -> [(projection, var, array)]

    def _probe(self, shape):
        p = self.probes.get(shape)
        if p is None:
            p = self.probes[shape] = self.rng.standard_normal(shape)
        return p

    def find(self, a: np.ndarray, kind=None):
        """The first recorded value equal to ``a`` and of the same ``kind``, or None."""
        if kind is None:
            return None
        proj = float(np.sum(a * self._probe(a.shape)))
        tol = 2 * RTOL * _scale(a) * (1 + a.size)     # |probe| <= 1 on average
        for q, var, b in self.buckets.get((a.shape, kind), ()):
            if abs(q - proj) <= tol and _close(b, a):
                return var
        return None

    def add(self, var, a: np.ndarray, kind=None):
        if kind is None:
            return
        proj = float(np.sum(a * self._probe(a.shape)))
        self.buckets.setdefault((a.shape, kind), []).append((proj, var, a))


def _tainted(program: Program, env) -> dict:
    """The pairing class of each value: ``None`` for a *degenerate* value (never
    paired), else the number of degenerate values it depends on (the first of each
    chain: ``g``, not also ``g^2``); values pair only within a class. A value is
    degenerate when its number at the random point does not reveal its function:

    - zero everywhere (``0 * p``, a gradient that cancels like a key bias's): adding
      it changes nothing, so ``0.9 v + 0.1 g^2`` would pair with ``0.9 v``;
    - constant across its entries (a saturated indicator, a constant function);
    - a kink that took one branch everywhere: ``max(norm, c)`` equals ``norm`` when
      ``norm > c``, which says nothing of the other branch.
    """
    sources, out = {}, {}
    for v in program.values:
        ops = [a for a in v.definition.atoms if a in sources]
        inherited = frozenset().union(*(sources[a] for a in ops))
        if _degenerate(v.definition, env[v.var], env):
            out[v.var] = None
            sources[v.var] = inherited if any(out[a] is None for a in ops) else inherited | {v.var}
        else:
            sources[v.var] = inherited
            out[v.var] = len(inherited)
    return out


def _degenerate(definition, a: np.ndarray, env) -> bool:
    if _scale(a) <= TINY:
        return True
    flat = a.reshape(-1)
    if np.all(flat == flat[0]) and (flat.size > 1 or flat[0] in (0.0, 1.0)):
        return True
    return _saturated(definition, env)


def _saturated(definition, env) -> bool:
    """Whether an indicator ``[t > 0]`` in ``definition`` takes one value at every
    entry here: the value then equals one of its pieces."""
    from verigrad.certify.vectorized import Vectorized
    from verigrad.kernel import Lamda, RealCond
    for rc in _subterms(definition, RealCond, set()):
        idx = sorted(rc.free_idx, key=lambda v: v.name)
        val = Vectorized({}, env).tensor(Lamda(idx, rc) if idx else rc).reshape(-1)
        if np.all(val == val[0]):
            return True
    return False


def _subterms(term, kind, seen: set):
    if term in seen:
        return
    seen.add(term)
    if isinstance(term, kind):
        yield term
    for a in _children(term):
        yield from _subterms(a, kind, seen)


def _children(t):
    from verigrad.kernel import Term
    for a in t._args:
        if isinstance(a, Term):
            yield a
        elif isinstance(a, tuple):
            yield from (b for b in a if isinstance(b, Term))


# -- the tie ---------------------------------------------------------------------------------------


def random_inputs(program: Program, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for v in program.inputs:
        shape = tuple(int(s.const_value()) for s in v.shape)
        out[v] = rng.standard_normal(shape)
    return out


def _expand(program: Program, cut: dict):
    """For each value: ``defn`` (its definition over cuts and inputs) and ``term`` (the
    cut variable if it is cut, else ``defn``: what its users see)."""
    term, defn = {}, {}
    for v in program.values:
        mapping = {a: term[a] for a in v.definition.atoms if a in term and term[a] is not a}
        d = subst(v.definition, mapping) if mapping else v.definition
        defn[v.var] = d
        term[v.var] = cut.get(v.var, d)
    return term, defn


def _at(term, env) -> np.ndarray:
    from verigrad.certify.vectorized import Vectorized
    if isinstance(term, Var):
        return np.asarray(env[term], dtype=np.float64)
    return Vectorized({}, env).tensor(term)


def tie_programs(text: Program, math: Program, names, seed: int = 0, progress=None) -> TieReport:
    """Tie ``text`` (the emitted module) to ``math`` (the JAX function): one
    ``ResultTie`` per result, named ``names``."""
    t0 = time.perf_counter()
    if tuple(text.inputs) != tuple(math.inputs):
        raise ValueError("the two programs take different inputs")
    if len(text.results) != len(math.results):
        raise ValueError(f"the text has {len(text.results)} results, the math {len(math.results)}")
    inputs = random_inputs(text, seed)
    env_t = text.evaluate(inputs)
    env_m = math.evaluate(inputs)

    # 1. Pair: every value of the math that the text also computes.
    pairs = _Pairs(np.random.default_rng(seed + 1))
    kind_t, kind_m = _tainted(text, env_t), _tainted(math, env_m)
    for v in text.values:
        if pairs.find(env_t[v.var], kind_t[v.var]) is None:
            pairs.add(v.var, env_t[v.var], kind_t[v.var])
    cut = {}                                    # member var -> the cut (a var of the text)
    for v in math.values:
        rep = pairs.find(env_m[v.var], kind_m[v.var])
        if rep is not None:
            cut[v.var] = rep
    reps = set(cut.values())
    for v in text.values:                       # the text's own repeats of a cut value
        rep = pairs.find(env_t[v.var], kind_t[v.var])
        if rep in reps:
            cut[v.var] = rep
    term_t, defn_t = _expand(text, cut)
    term_m, defn_m = _expand(math, cut)

    # 2. Obligations: each member of a cut against the cut's definition in the text.
    where = {v.var: v.where for v in text.values}
    where.update({v.var: v.where for v in math.values})
    obligations: dict = {}                      # cut -> [Obligation]
    pos = {v.var: k for k, v in enumerate(text.values)}
    for prog, defn in ((text, defn_t), (math, defn_m)):
        for v in prog.values:
            rep = cut.get(v.var)
            if rep is None or v.var is rep:
                continue
            lhs = _before(defn[v.var], pos[rep], pos, defn_t, {})
            obligations.setdefault(rep, []).append(
                Obligation(lhs, defn_t[rep], f"{where[v.var]} against {where[rep]}"))
    deps = {rep: _cuts_in(defn_t[rep], reps) | {c for ob in obs for c in _cuts_in(ob.lhs, reps)}
            for rep, obs in obligations.items()}
    for rep in reps:
        deps.setdefault(rep, _cuts_in(defn_t[rep], reps))

    # 3. Results.
    cache: dict = {}
    kernel = [0.0, 0]

    def prove(ob: Obligation):
        if ob.result is None:
            key = (ob.lhs, ob.rhs)
            hit = cache.get(key)
            if hit is None:
                t = time.perf_counter()
                hit = _prove_local(ob.lhs, ob.rhs, reps, defn_t, pos)
                ob.seconds = time.perf_counter() - t
                kernel[0] += ob.seconds
                kernel[1] += 1
                cache[key] = hit
            ob.result = hit
        return ob.result

    out = []
    for k, (name, rt, rm) in enumerate(zip(names, text.results, math.results)):
        lhs, rhs = _subst_terms(rt, term_t), _subst_terms(rm, term_m)
        a, b = _at(rt, env_t), _at(rm, env_m)
        if not _close(a, b):
            out.append(ResultTie(name, "REFUTED", _refutation(a, b, _blame(text, cut, rt))))
            continue
        top = Obligation(lhs, rhs, f"result {name}")
        cone, stack = set(), list(_cuts_in(lhs, reps) | _cuts_in(rhs, reps))
        while stack:
            c = stack.pop()
            if c not in cone:
                cone.add(c)
                stack.extend(deps.get(c, ()))
        todo = [top] + [ob for c in sorted(cone, key=_order(text)) for ob in obligations.get(c, ())]
        bad, conds = None, set()
        for ob in todo:
            r = prove(ob)
            if isinstance(r, Failure):
                bad = (ob, r)
                break
            conds |= {str(c) for c in r.conds} if hasattr(r, "conds") else set()
        if progress:
            progress(k + 1, len(text.results))
        if bad is None:
            out.append(ResultTie(name, "CHECKED", obligations=len(todo), conditions=sorted(conds)))
        else:
            ob, r = bad
            out.append(ResultTie(name, "UNKNOWN", f"the kernel could not prove {ob.what}: {r.reason}",
                                 obligations=len(todo)))
    return TieReport(out, len(reps), kernel[1], kernel[0], time.perf_counter() - t0)


UNFOLD = 8          # cut definitions an obligation may look through


def _prove_local(lhs, rhs, reps, defn, pos):
    """``lhs = rhs`` by the kernel; if the normal forms differ, unfold cuts one at a
    time, the latest first and those on one side only before the others: a cut may
    hide what makes the two sides equal (``x^3`` against ``c * x`` where the cut
    ``c`` is ``x * x``). Replacing a cut by its definition is what the induction
    allows: the cut is made earlier."""
    from verigrad.kernel import refl
    if lhs is rhs:
        return refl(lhs)
    first = result = prove_equal(lhs, rhs)
    for _ in range(UNFOLD):
        if isinstance(result, Theorem):
            return result
        left, right = _cuts_in(lhs, reps), _cuts_in(rhs, reps)
        if not (left | right):
            break
        c = max((left ^ right) or (left | right), key=pos.get)
        lhs, rhs = subst(lhs, {c: defn[c]}), subst(rhs, {c: defn[c]})
        result = prove_equal(lhs, rhs)
    return result if isinstance(result, Theorem) else first


def _before(term, limit: int, pos: dict, defn: dict, memo: dict):
    """``term`` with every cut at or after position ``limit`` of the text replaced by
    its definition, recursively: a member of a cut may be written in terms of the cut
    itself (``c + 0 * p``), and the induction may only use cuts made before."""
    late = {a for a in term.atoms if pos.get(a, -1) >= limit}
    if not late:
        return term
    mapping = {}
    for a in late:
        if a not in memo:
            memo[a] = _before(defn[a], limit, pos, defn, memo)
        mapping[a] = memo[a]
    return subst(term, mapping)


def _cuts_in(term, reps) -> set:
    return {a for a in term.atoms if a in reps}


def _subst_terms(t, term):
    mapping = {a: term[a] for a in t.atoms if a in term and term[a] is not a}
    return subst(t, mapping) if mapping else t


def _order(program: Program):
    pos = {v.var: k for k, v in enumerate(program.values)}
    return lambda var: pos.get(var, -1)


def _blame(text: Program, cut: dict, result) -> Value | None:
    """Where a refuted result goes wrong: walking back from it through the values of
    the text that have no counterpart in the math, the earliest whose own operands all
    do (an edited operation shows there)."""
    if not isinstance(result, Var):
        return None
    by_var = {v.var: v for v in text.values}
    pos = {v.var: k for k, v in enumerate(text.values)}
    seen, stack, frontier = set(), [result], []
    while stack:
        var = stack.pop()
        if var in seen or var not in by_var or var in cut:
            continue
        seen.add(var)
        ops = [a for a in by_var[var].definition.atoms if a in by_var]
        if all(a in cut for a in ops):
            frontier.append(var)
        stack.extend(ops)
    return by_var[min(frontier, key=pos.get)] if frontier else None


def _refutation(a, b, origin) -> str:
    err = np.abs(a - b)
    k = np.unravel_index(int(np.argmax(err)), err.shape) if err.size else ()
    at = "[" + ", ".join(map(str, k)) + "]" if k else ""
    msg = (f"differs from the certified math at random inputs: the text gives {float(a[k]) if a.size else float(a):.6g}"
           f"{' at ' + at if at else ''}, the math {float(b[k]) if b.size else float(b):.6g}")
    if origin is not None:
        msg += f"; the text departs from the math at {origin.where}"
    return msg


__all__ = ["tie_programs", "TieReport", "ResultTie", "Obligation"]


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
    return tie_programs(text_prog, math_prog, [p["name"] for p in outputs], seed, report)


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


__all__ += ["Tie", "tie_module", "tie_files", "tie_directory", "trace"]
