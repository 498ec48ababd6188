"""Which values of the text and of the math are the same function (untrusted guesses).

Both programs are evaluated in float64 at one random point. Two values *pair* when
they have the same shape and agree there to float64 rounding (``RTOL``, relative to
the larger); the tie then proposes that they are the same function of the inputs and
has the kernel check it. A guess can be wrong at no cost to soundness, only to the
tie's success, so this module tries to avoid guesses that a number alone cannot
support: a value is *degenerate* when its number does not reveal its function, and is
never paired:

- zero everywhere: ``0 * p``, or a gradient that cancels (a key bias's: softmax
  ignores a shift of every key). Adding it changes nothing numerically, so
  ``0.9 v + 0.1 g^2`` would pair with ``0.9 v``;
- the same number at every entry: a saturated indicator, a constant function;
- a kink that took one branch at every entry: ``max(norm, c)`` equals ``norm`` when
  ``norm > c``, which says nothing of the other branch.

A value that depends on degenerate values pairs only with a value that depends on as
many (counting the first of each chain: ``g``, not also ``g^2``): ``v + g^2`` and
``v`` differ in that count.
"""
from __future__ import annotations

import numpy as np

from verigrad.certify.vectorized import Vectorized
from verigrad.kernel import Lamda, RealCond, Term

from .programs import Program

RTOL = 1e-12        # float64 sums of the same terms in another order differ by ~1e-15
TINY = 1e-9         # a value this small everywhere counts as zero (a cancelled sum)


def scale(a: np.ndarray) -> float:
    return float(np.max(np.abs(a), initial=0.0))


def close(a: np.ndarray, b: np.ndarray, rtol: float = RTOL) -> bool:
    """Of the same shape, and at every entry equal up to ``rtol`` relative to the
    larger of the two entries (plus float64 rounding of the largest entry)."""
    if a.shape != b.shape:
        return False
    s = max(scale(a), scale(b))
    return s <= TINY or bool(np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + RTOL * s))


class Classes:
    """Recorded values, found again by their numbers. ``kind`` is a value's class
    (``classes``); ``None`` means degenerate: never recorded, never found."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.probes: dict = {}
        self.buckets: dict = {}          # (shape, kind) -> [(projection, var, array)]

    def _projection(self, a: np.ndarray) -> float:
        p = self.probes.get(a.shape)
        if p is None:
            p = self.probes[a.shape] = self.rng.standard_normal(a.shape)
        return float(np.sum(a * p))

    def find(self, a: np.ndarray, kind):
        """The first recorded value equal to ``a`` and of the same kind, or None."""
        if kind is None:
            return None
        q = self._projection(a)
        tol = 2 * RTOL * scale(a) * (1 + a.size)
        for p, var, b in self.buckets.get((a.shape, kind), ()):
            if abs(p - q) <= tol and close(a, b):
                return var
        return None

    def add(self, var, a: np.ndarray, kind):
        if kind is not None:
            self.buckets.setdefault((a.shape, kind), []).append((self._projection(a), var, a))


def classes(program: Program, env: dict) -> dict:
    """The class of each value: ``None`` if degenerate, else the number of
    degenerate values it depends on (the first of each chain)."""
    sources, out = {}, {}
    for v in program.values:
        ops = [a for a in v.definition.atoms if a in sources]
        inherited = frozenset().union(*(sources[a] for a in ops))
        if degenerate(v.definition, env[v.var], env):
            out[v.var] = None
            starts_chain = not any(out[a] is None for a in ops)
            sources[v.var] = inherited | {v.var} if starts_chain else inherited
        else:
            out[v.var] = len(inherited)
            sources[v.var] = inherited
    return out


def degenerate(definition: Term, a: np.ndarray, env: dict) -> bool:
    """Whether the number ``a`` of ``definition`` does not reveal its function."""
    if scale(a) <= TINY:
        return True
    flat = a.reshape(-1)
    if np.all(flat == flat[0]) and (flat.size > 1 or flat[0] in (0.0, 1.0)):
        return True
    return saturated(definition, env)


def saturated(definition: Term, env: dict) -> bool:
    """Whether an indicator ``[t > 0]`` of ``definition`` takes one value at every
    entry (over the indices it is read at): the value then equals one of its pieces."""
    for rc in subterms(definition, RealCond):
        idx = sorted(rc.free_idx, key=lambda v: v.name)
        val = Vectorized({}, env).tensor(Lamda(idx, rc) if idx else rc).reshape(-1)
        if np.all(val == val[0]):
            return True
    return False


def subterms(term: Term, kind, seen=None):
    """The subterms of ``term`` of type ``kind``, each once."""
    seen = set() if seen is None else seen
    if term in seen:
        return
    seen.add(term)
    if isinstance(term, kind):
        yield term
    for a in term._args:
        for b in (a if isinstance(a, tuple) else (a,)):
            if isinstance(b, Term):
                yield from subterms(b, kind, seen)


def pair(text: Program, env_t: dict, math: Program, env_m: dict, seed: int = 0) -> dict:
    """``{var: cut}``: each paired value of either program mapped to its cut, the
    first value of the text with its numbers (the cut maps to itself)."""
    found = Classes(seed)
    kind_t, kind_m = classes(text, env_t), classes(math, env_m)
    for v in text.values:
        if found.find(env_t[v.var], kind_t[v.var]) is None:
            found.add(v.var, env_t[v.var], kind_t[v.var])
    cut = {}
    for v in math.values:
        rep = found.find(env_m[v.var], kind_m[v.var])
        if rep is not None:
            cut[v.var] = rep
    reps = set(cut.values())
    for v in text.values:                  # the text's repeats of a value the math has
        rep = found.find(env_t[v.var], kind_t[v.var])
        if rep in reps:
            cut[v.var] = rep
    return cut


__all__ = ["pair", "classes", "degenerate", "close", "scale", "Classes", "RTOL", "TINY"]
