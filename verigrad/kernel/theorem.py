"""Theorems and the rules that alone can make them (trusted; the LCF discipline).

A ``Theorem`` states ``hyps |- lhs = rhs`` under side conditions ``conds``: for every
value of its free variables (sizes >= their lower bounds, indices in their ranges,
scalars with their facts) at which every hypothesis holds and every condition holds
(each condition universally over its indices), ``lhs`` and ``rhs`` are equal.

Only the functions of this module construct theorems (``_make``), and every rule
accepts as a premise only a theorem ``_make`` issued, unchanged since. Tactics outside
the kernel propose terms; these rules check. (Inside one Python process this protection
is a guard against mistakes, not against a hostile caller, who can reach any object: a
proof is trusted without trusting the process that made it by replaying its trace with
``verigrad check``, in a fresh process that loads only this kernel and the decoder.)

Every theorem records the rule that made it and the rule's other inputs (``args``), so
the proof can be written out as a trace and replayed (``replay_step``). Observers (``observers``) see
every theorem made, e.g. to check it numerically while tests run.
"""
from __future__ import annotations

import functools
import gc
import itertools
import math
import weakref
from dataclasses import dataclass

from . import derivative  # noqa: F401  (installs the normal form's calculus)
from . import terms as T
from .axioms import AXIOMS
from .normal import NF, BudgetSpent, Choices, Normalizer, NotDifferentiable, divisions
from .sizes import (ONE, IndexVar, KernelError, Poly, SizeSym, as_poly, divide_exact, fresh_index, nonneg,
                    positive as ppositive, reset_temporaries)


@dataclass(frozen=True)
class Condition:
    """A side condition: ``term != 0`` ('nonzero', 'offkink'), ``term > 0`` ('positive') or
    ``term`` differentiable ('smooth'), for every value of the index variables in it."""
    kind: str
    term: T.Term


class Theorem:
    """``hyps |- lhs = rhs`` (under ``conds``), made only by kernel rules. Its display
    (``statement()``, ``latex()``, reprs) is attached by ``verigrad.report.printing``."""
    __slots__ = ("hyps", "conds", "lhs", "rhs", "rule", "parents", "used", "args", "__weakref__")

    def __init__(self, *_args, **_kw):
        raise KernelError("theorems are made only by the kernel's rules")

    def __setattr__(self, name, value):
        raise AttributeError("theorems are immutable")

    def axioms(self) -> list[str]:
        """Every axiom this theorem rests on, transitively, sorted by name."""
        seen, out, stack = set(), set(), [self]
        while stack:
            th = stack.pop()
            if id(th) in seen:
                continue
            seen.add(id(th))
            out |= th.used
            stack.extend(th.parents)
        return sorted(out)


# The theorems this kernel issued, with the statement each was issued with.
_issued: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
observers: list = []        # callables ``f(theorem)``, told of every theorem made


def _fields(th):
    return th.hyps, th.conds, th.lhs, th.rhs


def _make(hyps, conds, lhs, rhs, rule, parents=(), used=(), args=()):
    """The one constructor of theorems. Every premise must be a theorem issued here and
    unchanged since (so no rule need check its premises itself before this)."""
    if bad := set(used) - AXIOMS.keys():
        raise KernelError(f"internal: unregistered axioms {sorted(bad)}")
    if lhs.shape != rhs.shape:
        raise KernelError(f"internal: equation between shapes {lhs.shape} and {rhs.shape}")
    for p in parents:
        _genuine(p)
    th = object.__new__(Theorem)
    for k, v in zip(Theorem.__slots__, (frozenset(hyps), frozenset(conds), lhs, rhs, rule, tuple(parents),
                                        frozenset(used), tuple(args))):
        object.__setattr__(th, k, v)
    for t in _terms_of(th):
        if t.reserved:
            raise KernelError(f"internal: the {rule} rule stated a kernel-reserved index: {t!r}")
    _issued[th] = _fields(th)
    for obs in observers:
        obs(th)
    return th


def _genuine(th) -> Theorem:
    """``th`` if this kernel issued it with the statement it has now."""
    issued = _issued.get(th) if isinstance(th, Theorem) else None
    if issued is None or any(a is not b and a != b for a, b in zip(issued, _fields(th))):
        raise KernelError(f"{th!r} is not a theorem issued by the kernel")
    return th


def _terms_of(th):
    return [th.lhs, th.rhs, *(t for h in th.hyps for t in h), *(c.term for c in th.conds)]


def _public(t, rule: str):
    """A term a rule may take: built only from statement-level indices."""
    t = T.as_term(t)
    if t.reserved:
        raise KernelError(f"{rule}: the term contains a kernel-reserved index name: {t!r}")
    return t


def _public_poly(p, rule: str) -> Poly:
    p = as_poly(p)
    if any(v.tag for v in p.index_vars()):
        raise KernelError(f"{rule}: {p} contains a kernel-reserved index name")
    return p


def _hyps(*ths):
    return set().union(*(th.hyps for th in ths))


def _conds(*ths):
    return set().union(*(th.conds for th in ths))


def _gc_paused(rule):
    """Run ``rule`` with the cyclic garbage collector paused: terms and normal forms make
    no reference cycles, while each collection would rescan the ever-growing tables of
    hash-consed terms (most of the time of a large ``instantiate``)."""
    @functools.wraps(rule)
    def paused(*args, **kw):
        was = gc.isenabled()
        gc.disable()
        try:
            return rule(*args, **kw)
        finally:
            if was:
                gc.enable()
    return paused


# -- primitive rules -----------------------------------------------------------------

def refl(t: T.Term) -> Theorem:
    """``|- t = t``."""
    t = _public(t, "refl")
    return _make((), (), t, t, "refl", args=(t,))


def assume(lhs: T.Term, rhs: T.Term) -> Theorem:
    """``lhs = rhs |- lhs = rhs``."""
    lhs, rhs = _public(lhs, "assume"), _public(rhs, "assume")
    if lhs.shape != rhs.shape:
        raise KernelError(f"cannot assume an equation between shapes {lhs.shape} and {rhs.shape}")
    return _make({(lhs, rhs)}, (), lhs, rhs, "assume", args=(lhs, rhs))


def symm(th: Theorem) -> Theorem:
    """From ``a = b`` infer ``b = a``."""
    return _make(th.hyps, th.conds, th.rhs, th.lhs, "symm", (th,))


def trans(th1: Theorem, th2: Theorem) -> Theorem:
    """From ``a = b`` and ``b = c`` infer ``a = c``."""
    if th1.rhs is not th2.lhs:
        raise KernelError(f"trans: {th1.rhs!r} is not {th2.lhs!r}")
    return _make(_hyps(th1, th2), _conds(th1, th2), th1.lhs, th2.rhs, "trans", (th1, th2))


def index(th: Theorem, idx) -> Theorem:
    """From ``A = B`` infer ``A[idx] = B[idx]`` (congruence under indexing)."""
    idx = tuple(_public_poly(e, "index") for e in idx)
    return _make(th.hyps, th.conds, T.Index(th.lhs, idx), T.Index(th.rhs, idx),
                 "index", (th,), {"congruence"}, args=(idx,))


def abstract(th: Theorem, idxs) -> Theorem:
    """Extensionality: from ``A[i..] = B[i..]`` for free ``i..`` infer
    ``Lamda[i..](A) = Lamda[i..](B)``. The indices must not occur in the hypotheses or
    conditions (the statement holds for every value of them)."""
    idxs = tuple(idxs)
    for v in idxs:
        if not isinstance(v, IndexVar) or v.tag:
            raise KernelError(f"abstract over {v!r}, which is not a statement-level index variable")
        if any(v in l.free_idx or v in r.free_idx for l, r in th.hyps):
            raise KernelError(f"abstract over {v.name}, which occurs in a hypothesis")
        if any(v in c.term.free_idx for c in th.conds):
            raise KernelError(f"abstract over {v.name}, which occurs in a side condition")
    return _make(th.hyps, th.conds, T.Lamda(idxs, th.lhs), T.Lamda(idxs, th.rhs), "abstract",
                 (th,), {"extensionality"}, args=(idxs,))


def define(name: str, body: T.Term) -> tuple[T.Term, Theorem]:
    """A defined constant and its defining equation ``|- name = body``."""
    c = T.Named(name, _public(body, "define"))
    return c, _make((), (), c, c.body, "definition", (), {"definition"}, args=(name, c.body))


@_gc_paused
def rewrite(th: Theorem, target: T.Term) -> Theorem:
    """Congruence: ``|- target = target'`` where every occurrence of ``th.lhs`` in
    ``target`` that is not under a binder of its free indices is replaced by ``th.rhs``.
    With hypotheses, or a condition not shown continuous, occurrences inside derivatives
    are left alone (``usable_in``: it holds at a point, not as an identity of functions).
    Inside ``At(body, ps, vs)`` the theorem is used at the point ``ps := vs``, so its side
    conditions are taken there, and it is used only where each value has the facts
    (positive, integer, ...) the theorem may assume of its param."""
    target = _public(target, "rewrite")
    blocked = th.lhs.free_idx | th.rhs.free_idx
    hyp_vars = set()
    for l, r in th.hyps:
        blocked |= l.free_idx | r.free_idx
        hyp_vars |= l.atoms | r.atoms
    th_vars = set().union(*(t.mentions for t in _terms_of(th)))
    cache, conds, nz, smooth = {}, set(), Normalizer(), {}

    def usable_in(d: T.Deriv) -> bool:
        """The theorem may be used inside the derivative ``d``: no hypothesis (it holds at a
        point), and each condition in d's variable is continuous along it, so the set where
        the theorem holds is open there (red team: ``sqrt(u)^2 = u`` under ``u > 0``, with
        ``u = #{b: y_b = 0} - 1/2``, a closed set, gave ``d(sqrt(u)^2 y_0)/dy_0 = d(u y_0)/dy_0``,
        0 against -1/2 at y = (0, 1))."""
        if d.var not in smooth:
            smooth[d.var] = not th.hyps and all(_continuous(c.term, d.var) for c in th.conds if d.var in c.term.mentions)
        return smooth[d.var]

    def usable_at(at: T.At) -> bool:
        """The theorem may be used inside ``at``'s body: no param it mentions is a
        hypothesis' variable, and every value has its param's facts."""
        return not (set(at.params) & hyp_vars) and all(
            _missing_fact(p, v, nz) is None for p, v in zip(at.params, at.values) if p in th_vars)

    def go(t: T.Term, ats: tuple) -> T.Term:
        if not th.lhs.atoms <= t.mentions:    # cannot occur in t: leave t alone
            return t
        if t is th.lhs:
            for c in th.conds:
                term = c.term
                for a in reversed(ats):
                    if term.atoms & set(a.params):
                        term = T.At(_apart(term, set().union(*(v.free_idx for v in a.values))), a.params, a.values)
                conds.add(Condition(c.kind, term))
            return th.rhs
        key = (t, ats)
        if key not in cache:
            cache[key] = _rebuild(t, lambda u: go(u, ats), blocked, usable_in, usable_at,
                                  lambda u: go(u, ats + (t,)))
        return cache[key]

    new = go(target, ())
    if not conds and new is target:
        raise KernelError(f"rewrite: {th.lhs!r} does not occur where it may be used in {target!r}")
    return _make(_hyps(th), conds, target, new, "rewrite", (th,), {"congruence"}, args=(target,))


def _rebuild(t: T.Term, go, blocked, usable_in, usable_at, go_inside_at) -> T.Term:
    if isinstance(t, (T.Lamda, T.Sum, T.ReduceMax)):
        bound = set(t.idxs) if isinstance(t, T.Lamda) else {t.idx}
        if bound & blocked:
            return t
    if isinstance(t, T.Deriv) and not usable_in(t):
        return t
    if isinstance(t, T.At):
        body = go_inside_at(t.body) if usable_at(t) else t.body
        return T.At(body, t.params, [go(v) for v in t.values])
    return T.map_args(t, go)


def _continuous(t: T.Term, var: T.Var) -> bool:
    """Differentiating ``t`` in each entry of ``var`` needs no condition: ``t`` is continuous
    along every entry of ``var``, everywhere."""
    nz = Normalizer()
    try:
        nz.derive(nz.tensor_of(t, {}).u, var, tuple(Poly.sym(fresh_index(s, "k", "k")) for s in var.shape))
    except KernelError:
        return False
    return not nz.conds


def _missing_fact(p: T.Var, v: T.Term, nz: Normalizer):
    """The first fact of ``p`` that ``v`` is not shown to have, or None."""
    shown = {"positive": ("pos",), "nonneg": ("pos", "nonneg"), "nonzero": ("pos",)}
    for fact in [f for f in ("positive", "nonzero", "nonneg", "integer") if f in p.facts]:
        if not (_integral(v) if fact == "integer" else nz.sign(v) in shown[fact]):
            return fact
    return None


def _integral(t: T.Term) -> bool:
    """``t`` takes only integer values: its normal form is integer-valued, reached with
    no side condition (a normal form reached under one, as ``sqrt(u)^2 = u`` for
    ``u > 0``, equals ``t`` only where the condition holds)."""
    nz = Normalizer()
    return nz.tensor_of(t, {}).u.integer and not nz.conds


def discharge(th: Theorem, proof: Theorem) -> Theorem:
    """Cut: from ``H, (l = r) |- a = b`` and ``G |- l = r`` infer ``H u G |- a = b``."""
    hyp = (proof.lhs, proof.rhs)
    if hyp not in th.hyps:
        raise KernelError(f"discharge: {proof.lhs!r} = {proof.rhs!r} is not a hypothesis of the theorem")
    return _make((th.hyps - {hyp}) | proof.hyps, th.conds | proof.conds, th.lhs, th.rhs, "discharge", (th, proof))


@_gc_paused
def at_elim(t: T.Term) -> Theorem:
    """``|- t = t'`` where every ``At(body, ps, vs)`` in ``t`` (innermost first) becomes
    ``body[ps := vs]``. Defined when no derivative in ``body`` is taken in a param replaced
    by a non-variable (``subst`` checks this): then evaluating after differentiating is
    plain substitution."""
    cache: dict = {}

    def go(u: T.Term) -> T.Term:
        if not u.has_at:
            return u
        if u not in cache:
            v = T.map_args(u, go)
            cache[u] = T.subst(v.body, dict(zip(v.params, v.values))) if isinstance(v, T.At) else v
        return cache[u]

    t = _public(t, "at_elim")
    new = go(t)
    if new is t:
        raise KernelError(f"at_elim: no At in {t!r}")
    return _make((), (), t, new, "at_elim", (), {"at_elim"}, args=(t,))


@_gc_paused
def instantiate(th: Theorem, mapping: dict) -> Theorem:
    """Substitute for free symbols of a theorem, checking every domain:
    a size by an expression provably >= its lower bound; an index by an expression
    provably in its range; a variable by a term of its shape with its facts; an opaque
    TensorFn by a ``FnLam`` of matching shapes (differentiability of the body becomes a
    side condition: the theorem was proved for differentiable functions). A free index
    whose range mentions a substituted size is renamed to one ranging over the new
    range (the statement holds for every index in the range it had)."""
    nz = Normalizer()
    extra, given = set(), dict(mapping)
    mapping = {k: _public_poly(v, "instantiate") if isinstance(k, T.IntSym) else
               _public(v, "instantiate") if isinstance(k, T.Var) else v for k, v in given.items()}
    sizes = {k: v for k, v in mapping.items() if isinstance(k, SizeSym)}
    for k, v in mapping.items():
        if isinstance(k, SizeSym):
            if v.index_atoms() or not nonneg(v - k.lower):
                raise KernelError(f"instantiate: {k.name} := {v} is not provably >= {k.lower}")
        elif isinstance(k, IndexVar):
            size = k.size.subst(sizes)
            if not (nonneg(v) and nonneg(size - 1 - v)):
                raise KernelError(f"instantiate: {k.name} := {v} is not provably in [0, {k.size})")
        elif isinstance(k, T.Var):
            if fact := _missing_fact(k, v, nz):
                raise KernelError(f"instantiate: {k.name} must be {fact}; {v!r} is not provably so")
        elif isinstance(k, T.TensorFn):
            if not isinstance(v, T.FnLam):
                raise KernelError(f"instantiate: {k.name} must be replaced by a FnLam")
            for t in (v.body, v.cot, *v.params):
                _public(t, "instantiate")
            if tuple(p.shape for p in v.params) != tuple(tuple(d.subst(sizes) for d in sh) for sh in k.arg_shapes) \
                    or v.body.shape != tuple(d.subst(sizes) for d in k.out_shape):
                raise KernelError(f"instantiate: {k.name} replaced by a function of other shapes")
            taken = set(v.body.free_idx)
            extra.add(Condition("smooth", T.Lamda([T.fresh_name("i", s, taken) for s in v.body.shape], v.body)
                                if v.body.shape else v.body))
        else:
            raise KernelError(f"instantiate: cannot substitute for {k!r}")
    args = (tuple(mapping.items()),)
    if sizes:
        free = set().union(*(t.free_idx for t in _terms_of(th)))
        taken = free | set().union(*(v.index_vars() for k, v in mapping.items() if isinstance(k, T.IntSym)))
        for v in sorted(free - mapping.keys(), key=lambda v: v.skey):
            if v.size.symbols() & sizes.keys():
                mapping[v] = Poly.sym(T.fresh_name(v.name, v.size.subst(sizes), taken))
    sub = T.substitution(mapping)       # one for all sides: they share subterms
    hyps = {(sub(l), sub(r)) for l, r in th.hyps}
    conds = {Condition(c.kind, _instantiate_condition(c.term, mapping, sizes)) for c in th.conds} | extra
    return _make(hyps, conds, sub(th.lhs), sub(th.rhs), "instantiate", (th,), args=args)


def _instantiate_condition(term: T.Term, mapping: dict, sizes: dict) -> T.Term:
    """A side condition under ``instantiate``. Its index variables are its own: it holds
    for every value of them (``Condition``), whatever the statement's indices are named, so
    an index the mapping gives a value is not substituted here (red team: the condition
    ``x[i] > 0`` for every i, met by a statement with its own free ``i``, became ``x[0] > 0``
    at ``i := 0``); sizes and variables are, and an index whose range mentions a
    substituted size ranges over the new size."""
    own = {k: v for k, v in mapping.items() if not isinstance(k, IndexVar)}
    brought = set().union(*(v.index_vars() if isinstance(v, Poly) else (v.body if isinstance(v, T.FnLam) else v).free_idx
                            for v in own.values()))     # (a FnLam brings its body's)
    term = _apart(term, brought)
    if sizes:
        taken = set(term.free_idx) | brought
        for v in sorted(term.free_idx, key=lambda v: v.skey):
            if v.size.symbols() & sizes.keys():
                own[v] = Poly.sym(T.fresh_name(v.name, v.size.subst(sizes), taken))
    return T.substitution(own)(term)


def _apart(term: T.Term, brought: set) -> T.Term:
    """A side condition with its own index variables renamed away from ``brought``, the
    free indices of values about to be put into it: they are the statement's, and the
    condition's indices (quantified over every value) must not capture them (red team
    RT-23: ``x z[i] > 0`` for every i, at ``x := y[i]``, read ``y[i] z[i] > 0``, the
    diagonal only)."""
    clash = term.free_idx & brought
    if not clash:
        return term
    taken = set(term.free_idx) | brought
    return T.subst(term, {v: Poly.sym(T.fresh_name(v.name, v.size, taken))
                          for v in sorted(clash, key=lambda v: v.skey)})


# -- the decision procedure -------------------------------------------------------------

@dataclass
class Failure:
    """Why ``prove_equal`` could not prove an equation: a message and, when both sides
    normalized, the residual ``lhs - rhs`` in normal form."""
    reason: str
    residual: T.Term | None = None

    def __str__(self):
        return self.reason + (f"; residual lhs - rhs = {self.residual!r}" if self.residual is not None else "")


@_gc_paused
def prove_equal(lhs: T.Term, rhs: T.Term, using=(), choices=None, budget=None, plan=None) -> Theorem | Failure:
    """Decide ``lhs = rhs`` by normal forms: a Theorem, or a Failure saying why not.

    ``using`` lists theorems ``|- v = t`` for variables ``v`` (definitions of a
    variable by a term, typically hypotheses): ``v`` is replaced by ``t`` on both sides
    first, and the result rests on them. A variable differentiated by a ``Deriv`` may
    not be replaced (it is a coordinate, not a value).

    The untrusted hooks' choices (binder and nesting orders) are recorded in the
    theorem's ``args``; given as ``choices`` (a replay), they are used instead of the
    hooks. Any choice is sound; a wrong one can only make the decision fail. ``budget``
    bounds the work (monomial products): past it the answer is a Failure.

    The decision tries passes (the kinks read loosely, then strictly; a free index read
    through a floor division split first); the one that succeeded is recorded too, as
    ``plan``: its strictness, the splits before it and where its choices start. Given a
    ``plan`` (a replay), only that pass is made: each pass is a decision on its own, and
    each split is checked as the search checks it, so a plan can only make it fail."""
    reset_temporaries()     # the same decision makes the same temporaries in any process
    try:
        return _prove_equal(_public(lhs, "prove_equal"), _public(rhs, "prove_equal"), tuple(using),   # read once (RT12-A)
                            Choices(choices, budget), plan)
    except BudgetSpent as e:
        return Failure(str(e))


def _prove_equal(lhs: T.Term, rhs: T.Term, using, choices: Choices, plan) -> Theorem | Failure:
    if lhs.shape != rhs.shape:
        return Failure(f"the sides have different shapes {T._shape_str(lhs.shape)} and {T._shape_str(rhs.shape)}")
    mapping = {}
    for th in using:
        if not isinstance(_genuine(th).lhs, T.Var):
            raise KernelError(f"prove_equal can use only equations 'variable = term', not {th.lhs!r} = ...")
        if th.lhs in th.rhs.atoms:
            raise KernelError(f"prove_equal: {th.lhs.name} occurs in its own defining term")
        if th.lhs.free_idx or th.rhs.free_idx:
            raise KernelError(f"prove_equal: the equation for {th.lhs.name} has free indices")
        mapping[th.lhs] = th.rhs
    # subst refuses to replace a differentiated variable or to make a derivative's body
    # depend on its variable in a new way (a hypothesis holds at a point).
    lhs2, rhs2 = T.subst(lhs, mapping), T.subst(rhs, mapping)
    # One term read two ways: equal, with no condition. (A replay given the pass that
    # proved it goes to that pass: the shortcut is only faster, either way is sound.)
    if plan is None and T.convertible(lhs2, rhs2):
        return _make(_hyps(*using), _conds(*using), lhs, rhs, "decide", tuple(using), {"conversion"},
                     args=(lhs, rhs, (), None))
    idx = [Poly.sym(fresh_index(s, "k", "k")) if s is not ONE else Poly.const(0) for s in lhs.shape]
    try:
        if plan is None:
            nz, diff, plan = _search(lhs2, rhs2, idx, choices)
        else:
            nz, diff = _planned(lhs2, rhs2, idx, choices, plan)
    except NotDifferentiable as e:
        return Failure(f"not differentiable: {e}")
    if diff.terms:
        cases = _cases(lhs2, rhs2, idx, "rind:" in diff.skey, choices)
        if cases is None:
            from .reify import reify
            return Failure("the normal forms differ", reify(diff))
        nz = cases
    if plan[1]:
        nz.use("index_split")
    nz.use("ring")
    conds = {Condition(kind, _closed(u)) for kind, u in nz.conds.values()}
    return _make(_hyps(*using), conds | _conds(*using), lhs, rhs, "decide", tuple(using), nz.axioms,
                 args=(lhs, rhs, tuple(choices.made), plan))


def _search(lhs, rhs, idx: list, choices: Choices):
    """The passes of a decision until one leaves no difference (or none is left to try):
    its normalizer, the difference and the plan that makes that pass alone."""
    splits = []
    for strict in (False, True):
        while True:
            start = len(choices.made)
            nz, diff = _pass(lhs, rhs, idx, strict, choices)
            if not diff.terms or len(splits) > 2 * len(idx) or (split := _split_free(diff, idx)) is None:
                break
            splits.append(split)
        if not diff.terms or "rind:" not in diff.skey:
            break
    if any(m.index_atoms() for _, _, m in splits):
        start = None    # not written to a trace (its reserved indices): a replay searches
    return nz, diff, (strict, tuple(splits), start)


def _planned(lhs, rhs, idx: list, choices: Choices, plan):
    """The pass ``plan`` names (``_search``'s third result), after its splits, each checked
    as ``_split_free`` checks it (``_split``, for a size expression ``m >= 1``)."""
    if not (type(plan) is tuple and len(plan) == 3):
        raise KernelError(f"malformed decision plan {plan!r}")
    strict, splits, start = plan
    if not (isinstance(strict, bool) and type(splits) is tuple and len(splits) <= 2 * len(idx) + 1
            and type(start) is int and start >= 0):
        raise KernelError(f"malformed decision plan {plan!r}")
    for j, pos, m in splits:
        ks = sorted(idx[j].index_vars()) if type(j) is int and 0 <= j < len(idx) else []
        if not (type(pos) is int and 0 <= pos < len(ks) and isinstance(m, Poly) and not m.index_atoms()
                and ppositive(m) and _split(idx, j, ks[pos], m)):
            raise KernelError(f"the split {(j, pos, m)!r} of a decision plan is not one of a range q*m")
    choices.skip(start)
    return _pass(lhs, rhs, idx, strict, choices)


def _pass(lhs, rhs, idx: list, strict: bool, choices: Choices):
    """One pass: the difference of the normal forms at ``idx``, denominators cleared.
    Its temporaries are numbered from 1 (none is alive between passes), so a replay that
    makes this pass alone makes the same ones."""
    reset_temporaries(("t",))
    nz = Normalizer(strict_kinks=strict, choices=choices)
    diff = nz.sub(nz.norm(lhs, tuple(idx)), nz.norm(rhs, tuple(idx)))
    return nz, _clear_denominators(nz, diff)


def _closed(u: NF) -> T.Term:
    """A condition as a statement-level term: its free indices (the condition holds for
    every value of them) named i, j, ..., its bound ones b, c, ... (none a reserved name)."""
    from .reify import reify
    t = reify(u)
    taken = set()
    names = ["i", "j", "l", "p", "q", "r"]
    free = {v: Poly.sym(T.fresh_name(names[k % 6], v.size, taken)) for k, v in
            enumerate(sorted(t.free_idx, key=lambda v: v.skey))}
    return _publish(T.subst(t, free), taken, {})


def _publish(t: T.Term, taken: set, memo: dict) -> T.Term:
    """``t`` with every reserved bound index renamed to a statement-level one that
    captures nothing (it avoids ``taken``, the free indices in scope)."""
    if not t.reserved:
        return t
    if t not in memo:
        if isinstance(t, (T.Sum, T.ReduceMax, T.Lamda)):
            olds = t.idxs if isinstance(t, T.Lamda) else (t.idx,)
            scope = taken | t.free_idx
            news = [T.fresh_name("b" if v.tag else v.name, v.size, scope) for v in olds]
            body = _publish(T.subst(t.body, {v: Poly.sym(w) for v, w in zip(olds, news)}), scope, {})
            memo[t] = T.Lamda(news, body) if isinstance(t, T.Lamda) else type(t)(news[0], body, *t._args[2:])
        else:
            memo[t] = T.map_args(t, lambda u: _publish(u, taken, memo))
    return memo[t]


CASE_LIMIT = 16


def _cases(lhs, rhs, idx, strict, choices) -> Normalizer | None:
    """Finite case analysis: a free index with a small constant range (a kernel tap) is
    set to each of its values, and the equation decided in every case. The Normalizer of
    the cases (axioms and conditions of all of them), or None if one case fails."""
    small = {j: v.size.const_value() for j, p in enumerate(idx) for v in p.index_vars()
             if p is Poly.sym(v) and v.size.is_const()}
    if not small or math.prod(small.values()) > CASE_LIMIT:
        return None
    nz = Normalizer(strict_kinks=strict, choices=choices)
    nz.use("case_split")
    for combo in itertools.product(*(range(n) for n in small.values())):
        at = list(idx)
        for j, v in zip(small, combo):
            at[j] = Poly.const(v)
        if _clear_denominators(nz, nz.sub(nz.norm(lhs, tuple(at)), nz.norm(rhs, tuple(at)))).terms:
            return None
    return nz


def _split_free(diff: NF, idx: list):
    """Split a free index read through floor division by m, of range q*m, into
    ``u*m + v`` (in place): ``(j, position of the index in idx[j], m)``, or None."""
    for fd in divisions(diff.skey):
        for j, p in enumerate(idx):
            for k in sorted(p.index_vars() & fd.a.symbols()):
                if _split(idx, j, k, fd.m):
                    return j, sorted(p.index_vars()).index(k), fd.m
    return None


def _split(idx: list, j: int, k: IndexVar, m: Poly) -> bool:
    """``idx[j]`` with ``k := u*m + v`` (``u < q``, ``v < m`` fresh) when ``k``'s range is ``q*m``."""
    q, r = divide_exact(k.size, m)
    if r.terms or not q.terms or q is ONE:
        return False
    idx[j] = idx[j].subst({k: Poly.sym(fresh_index(q, "k", "k")) * m + Poly.sym(fresh_index(m, "k", "k"))})
    return True


def _clear_denominators(nz: Normalizer, diff: NF) -> NF:
    """``diff`` with its denominators cleared, then its cancelling sums dropped: ``diff == 0``
    iff the result is."""
    return nz.cancel_sums(nz.clear_positive(diff))


# -- replaying a recorded step -------------------------------------------------------------

# Each rule under the name it records (``Theorem.rule``), taking the premises, the other
# inputs (``args``) and, for a decision, the recorded choices, as a trace holds them.
RULES = {
    "refl": lambda ps, a, ch: refl(*a),
    "assume": lambda ps, a, ch: assume(*a),
    "symm": lambda ps, a, ch: symm(*ps),
    "trans": lambda ps, a, ch: trans(*ps),
    "index": lambda ps, a, ch: index(ps[0], *a),
    "abstract": lambda ps, a, ch: abstract(ps[0], *a),
    "definition": lambda ps, a, ch: define(*a)[1],
    "rewrite": lambda ps, a, ch: rewrite(ps[0], *a),
    "discharge": lambda ps, a, ch: discharge(*ps),
    "at_elim": lambda ps, a, ch: at_elim(*a),
    "instantiate": lambda ps, a, ch: instantiate(ps[0], dict(a[0])),
    "decide": lambda ps, a, ch: prove_equal(a[0], a[1], using=ps, choices=ch, plan=a[2] if len(a) > 2 else None),
}


def replay_step(rule: str, premises, args, choices, statement) -> Theorem:
    """The trusted part of a replay: apply the rule named ``rule`` again to the theorems
    ``premises`` and the inputs ``args`` (``choices``: a decision's recorded choices), and
    return the theorem only if it states exactly ``statement``, the ``(lhs, rhs, hyps,
    conds)`` a trace records for the step. The decoder that reads a trace into these
    arguments (``verigrad.trace.replay``) is not trusted: whatever it passes, the rule
    checks its inputs, and the statement it reports is the one matched here."""
    make = RULES.get(rule)
    if make is None:
        raise KernelError(f"unknown rule {rule!r}")
    th = make(list(premises), tuple(args), choices)
    if not isinstance(th, Theorem):
        raise KernelError(f"the decision fails: {th}")
    lhs, rhs, hyps, conds = statement
    if (lhs, rhs, frozenset(hyps), frozenset(conds)) != (th.lhs, th.rhs, th.hyps, th.conds):
        raise KernelError("the replayed rule states something other than the trace records")
    return th
