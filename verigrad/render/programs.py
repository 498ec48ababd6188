"""A function as a straight-line program over kernel terms (untrusted).

Both sides of the render tie become *programs*: a list of values, each a fresh
variable ``v`` with its definition ``def(v)``, a kernel term of one operation over
earlier variables (and the inputs):

    s17 := Lamda[i, k](Sum[r](s12[i, r] * arg0[r, k]))      (stablehlo.dot_general)

``stablehlo_program`` interprets the emitted text (``verigrad.frontends.stablehlo``'s
rules, one per operation), ``jaxpr_program`` the traced JAX function
(``verigrad.frontends.jaxpr``'s rules, one per primitive); calls are inlined on both
sides. Values without a variable in them (constants, iotas) stay terms, so the rules
that read a constant operand (a power's exponent, a reduction's initial value, a
``select`` of an infinity) still see it.

``Program.evaluate`` computes every value in float64 at given inputs (the numeric
meaning of each definition, ``verigrad.certify.vectorized``), which is how the tie
finds the values the two programs share.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from verigrad.kernel import Num, Term, Var, subst

from verigrad.certify.vectorized import Vectorized


@dataclass
class Value:
    """One value of a program: its variable, its definition, and where it comes from
    (``file:line:col op`` for the text, ``file:line primitive`` for the jaxpr)."""
    var: Var
    definition: Term
    where: str


@dataclass
class Program:
    """``inputs`` (Vars), ``values`` in order, ``results`` (terms over the values'
    variables: a variable, or a constant) and the numbers of named constants."""
    inputs: tuple
    values: list
    results: list
    constants: dict = field(default_factory=dict)
    assumptions: list = field(default_factory=list)     # what a reading rests on (the jaxpr importer's)

    def evaluate(self, inputs: dict) -> dict:
        """``{var: float64 array}`` for every input, constant and value."""
        env = dict(self.constants)
        env.update(inputs)
        ev = Vectorized({}, env)
        for v in self.values:
            env[v.var] = ev.tensor(v.definition)
            ev.cache.clear()          # each definition reads variables only: nothing to share
            ev.wholes.clear()
        return env


# -- the text ---------------------------------------------------------------------------------


def stablehlo_program(parsed, names) -> Program:
    """The ``@main`` of a parsed module as a program; its arguments are ``Var``s named
    ``names``."""
    from verigrad.frontends import stablehlo as SH
    from verigrad.frontends import stablehlo_rules as R

    class Recording(R.Interpreter):
        def __init__(self, parsed):
            super().__init__(parsed)
            self.values = []

        def apply(self, op, operands):
            out = []
            for r in super().apply(op, operands):
                if isinstance(r, Term) and r.atoms and not isinstance(r, Var):
                    v = Var(f"s{len(self.values)}", r.shape)
                    self.values.append(Value(v, r, f"{op.where} {op.name}"))
                    r = v
                out.append(r)
            return out

    sig = SH.signature(parsed)
    inputs = tuple(SH.input_var(n, s) for n, s in zip(names, sig.inputs))
    interp = Recording(parsed)
    with parsed.context:
        results = interp.call(parsed.main, list(inputs))
    for k, r in enumerate(results):
        if not isinstance(r, Term):
            raise SH.StableHLOError(f"{parsed.path}: result {k} of @main is a non-finite constant")
    return Program(inputs, interp.values, list(results), dict(interp.constants))


# -- the traced function --------------------------------------------------------------------------


def f32(v: float) -> Num:
    """A float32 literal as the shortest decimal that rounds to it: the reading the
    StableHLO importer gives the printed text, so both sides agree on every constant."""
    return Num(Fraction(str(np.float32(v))))


def jaxpr_program(closed, inputs) -> Program:
    """A closed jaxpr (traced in float32) as a program over the ``Var``s ``inputs``."""
    from jax.extend.core import Literal

    from verigrad.frontends.jaxpr import Importer, JaxprImportError, Tensor, kind_of, where_of
    from verigrad.frontends.jaxpr_rules import RULES
    from verigrad.kernel import Delta, KernelError

    values = []

    class Recording(Importer):
        def literal(self, val, aval):
            return self.constant(val, aval)

        def constant(self, c, aval):
            arr = np.asarray(c)
            kind = kind_of(aval.dtype)
            if kind != "real" or not np.all(np.isfinite(arr)):
                return super().constant(c, aval)
            if arr.size and np.all(arr == arr.flat[0]):
                t = f32(float(arr.flat[0]))
                return Tensor(arr.shape, lambda idx: t, kind, const=float(arr.flat[0]))
            if arr.size > 256:
                raise JaxprImportError(f"a constant array of {arr.size} entries is too large to import")

            def entry(idx):
                out = Num(0)
                for pos in np.ndindex(*arr.shape):
                    if arr[pos] != 0:
                        term = f32(float(arr[pos]))
                        for e, p in zip(idx, pos):
                            term = term * Delta(e, p)
                        out = out + term
                return out
            return Tensor(arr.shape, entry, kind)

        def run(self, closed, args):
            jaxpr = getattr(closed, "jaxpr", closed)
            env = {}

            def read(v):
                return self.literal(v.val, v.aval) if isinstance(v, Literal) else env[v]

            for v, c in zip(jaxpr.constvars, getattr(closed, "consts", ())):
                env[v] = self.constant(c, v.aval)
            for v, a in zip(jaxpr.invars, args):
                env[v] = a
            for eqn in jaxpr.eqns:
                name = eqn.primitive.name
                rule = RULES.get(name)
                where = f"{where_of(eqn)} {name}"
                if rule is None:
                    raise JaxprImportError(f"unsupported primitive '{name}' at {where}")
                try:
                    outs = rule(self, eqn, *[read(v) for v in eqn.invars])
                except KernelError as e:
                    raise JaxprImportError(f"{where}: {e}") from None
                outs = [outs] if isinstance(outs, Tensor) else outs
                for v, t in zip(eqn.outvars, outs):
                    env[v] = self.value(t, where)
            return [read(v) for v in jaxpr.outvars]

        def value(self, t, where):
            if t.const is not None or (t._term is not None and isinstance(t._term, Var)):
                return t
            term = t.term()
            if not term.atoms:
                return t
            var = Var(f"j{len(values)}", term.shape)
            values.append(Value(var, term, where))
            return Tensor.of(var, t.kind)

    importer = Recording()
    outs = importer.run(closed, [Tensor.of(v) for v in inputs])
    return Program(tuple(inputs), values, [t.term() for t in outs],
                   assumptions=list(getattr(importer, "assumptions", ())))


__all__ = ["Program", "Value", "stablehlo_program", "jaxpr_program", "f32"]


def over(t: Term, term: dict) -> Term:
    """``t`` with each value in it replaced by its term over the cuts (``term``, a value's
    whole definition down to the program's inputs and cut values)."""
    mapping = {a: term[a] for a in t.atoms if a in term and term[a] is not a}
    return subst(t, mapping) if mapping else t


def dag_size(t: Term, limit: int) -> int:
    """The number of distinct subterms of ``t``, counted up to just past ``limit``."""
    seen, stack = set(), [t]
    while stack and len(seen) <= limit:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        for a in x._args:
            for b in (a if isinstance(a, tuple) else (a,)):
                if isinstance(b, Term):
                    stack.append(b)
    return len(seen)
