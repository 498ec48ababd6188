"""Differential tests of the StableHLO importer: every rule against XLA.

For every operation of ``stablehlo_rules.RULES``: modules of that operation at random
shapes and values (integers over their whole range, negative and at the extremes,
included), each either imported and its terms evaluated in float64
(``verigrad.certify.evaluate``) against XLA executing the same text, or refused with
one line naming the operation and its ``line:col``. Which it is is part of the case:
a rule that silently imports what it should refuse, or refuses what it models, fails.
``test_every_rule_has_a_differential_test`` fails on a rule without cases here.

Seeds are fixed (crc32 of the operation's name), so a failure repeats."""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

import jax
import numpy as np
import pytest

from verigrad.certify.evaluate import evaluate
from verigrad.frontends.stablehlo import FLOAT_BITS, INT_RANGE, StableHLOError, import_module, numpy_dtype
from verigrad.frontends.stablehlo_rules import RULES
from verigrad.run.backend import XlaExecutable, signature, parse, to_host

# float64 against XLA in the operand's own precision
TOL = {"f16": 4e-3, "bf16": 3e-2, "f32": 2e-5, "f64": 1e-10}


# -- building modules ----------------------------------------------------------------------------

def ty(shape, dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{dtype}>"


@dataclass
class Case:
    """One module: ``args`` (name, shape, dtype, values), lines of the body, the
    returned values and their types; ``refuse`` a pattern the refusal must match."""
    what: str
    args: list
    body: list
    results: list                    # (ssa name, type)
    refuse: str | None = None
    prelude: str = ""                # module-level text before @main

    def text(self) -> str:
        params = ", ".join(f"%{n}: {ty(s, d)}" for n, s, d, _ in self.args)
        outs = ", ".join(t for _, t in self.results)
        lines = [f"func.func public @main({params}) -> ({outs}) {{"] + ["  " + b for b in self.body]
        lines.append(f"  return {', '.join('%' + r for r, _ in self.results)} : {outs}")
        return self.prelude + "\n".join(lines + ["}"])


class Gen:
    """Random shapes and values, seeded by the operation's name."""

    def __init__(self, name):
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def shape(self, rank=None, lo=1, hi=4):
        rank = int(self.rng.integers(0, 4)) if rank is None else rank
        return tuple(int(d) for d in self.rng.integers(lo, hi + 1, rank))

    def values(self, shape, dtype, kind="normal"):
        """Floats: ``normal`` (scaled N(0, 1)), ``positive``, ``away`` (|x| >= 0.25);
        integers: the whole range with its extremes, 0 and +-1; booleans: coin flips."""
        r = self.rng
        if dtype == "i1":
            return r.random(shape) < 0.5
        if dtype in INT_RANGE:
            lo, hi = INT_RANGE[dtype]
            x = r.integers(lo, hi, shape, endpoint=True, dtype=np.int64 if dtype != "ui64" else np.uint64)
            special = np.array([v for v in (lo, hi, 0, 1, -1, lo + 1, hi - 1) if lo <= v <= hi], dtype=object)
            pick = r.random(shape) < 0.3
            x = np.where(pick, r.choice(special, shape), x)
            return np.asarray(x).astype(numpy_dtype(dtype))
        x = r.standard_normal(shape) * 2
        if kind == "positive":
            x = np.abs(x) + 0.05
        elif kind == "away":
            x = np.where(np.abs(x) < 0.25, 0.25 + np.abs(x), x)
        return np.asarray(x).astype(numpy_dtype(dtype))

    def arg(self, name, shape, dtype, kind="normal"):
        return (name, shape, dtype, self.values(shape, dtype, kind))


def unary(g, op, dtype, shape=None, kind="normal", out=None, refuse=None, attrs=""):
    shape = g.shape() if shape is None else shape
    out = out or dtype
    types = f"{ty(shape, dtype)} -> {ty(shape, out)}" if op.startswith("chlo.") else \
        f"({ty(shape, dtype)}) -> {ty(shape, out)}"
    return Case(f"{op} {dtype}", [g.arg("a", shape, dtype, kind)], [f"%0 = {op} %a{attrs} : {types}"],
                [("0", ty(shape, out))], refuse)


def binary(g, op, dtype, shape=None, kinds=("normal", "normal"), out=None, refuse=None, attrs=""):
    shape = g.shape() if shape is None else shape
    out = out or dtype
    return Case(f"{op} {dtype}", [g.arg("a", shape, dtype, kinds[0]), g.arg("b", shape, dtype, kinds[1])],
                [f"%0 = {op} %a, %b{attrs} : ({ty(shape, dtype)}, {ty(shape, dtype)}) -> {ty(shape, out)}"],
                [("0", ty(shape, out))], refuse)


def narrow_ints(g, op, dtype="i32", src="i8", shape=None, n=2, out=None):
    """``op`` on ``dtype`` values converted from ``src`` arguments: bounded, so exact."""
    shape = g.shape() if shape is None else shape
    out = out or dtype
    args = [g.arg(f"a{k}", shape, src) for k in range(n)]
    body = [f"%c{k} = stablehlo.convert %a{k} : ({ty(shape, src)}) -> {ty(shape, dtype)}" for k in range(n)]
    operands = ", ".join(f"%c{k}" for k in range(n))
    types = f"{ty(shape, dtype)} -> {ty(shape, out)}" if op.startswith("chlo.") else \
        f"({', '.join([ty(shape, dtype)] * n)}) -> {ty(shape, out)}"
    body.append(f"%0 = {op} {operands} : {types}")
    return Case(f"{op} {dtype} from {src}", args, body, [("0", ty(shape, out))])


def refused(op, why=""):
    """The pattern of a refusal naming ``op``, its line and column, and ``why``."""
    return rf"^<text>:\d+:\d+: {re.escape(op)}: .*{why}"


# -- the cases, per rule -------------------------------------------------------------------------

CASES: dict = {}


def cases(*names):
    def deco(f):
        for n in names:
            CASES[n] = f
        return f
    return deco


@cases("stablehlo.exponential", "stablehlo.exponential_minus_one", "stablehlo.tanh", "chlo.erf", "chlo.erfc",
       "stablehlo.logistic", "chlo.square")
def _float_unary(name):
    g = Gen(name)
    return [unary(g, name, "f32"), unary(g, name, "f32", shape=()), unary(g, name, "f16"), unary(g, name, "bf16"),
            unary(g, name, "f64")]


@cases("stablehlo.log", "stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.log_plus_one")
def _float_unary_positive(name):
    g = Gen(name)
    return [unary(g, name, "f32", kind="positive"), unary(g, name, "f16", kind="positive"),
            unary(g, name, "f64", kind="positive")]


@cases("stablehlo.negate")
def _negate(name):
    g = Gen(name)
    return [unary(g, name, "f32"), unary(g, name, "bf16"), narrow_ints(g, name, n=1),
            narrow_ints(g, name, "i64", "i32", n=1),
            unary(g, name, "i32", refuse=refused(name, "may leave")),
            unary(g, name, "ui8", refuse=refused(name, "may leave"))]


@cases("stablehlo.abs")
def _abs(name):
    g = Gen(name)
    return [unary(g, name, "f32"), narrow_ints(g, name, n=1), narrow_ints(g, name, "i16", "i8", n=1),
            unary(g, name, "i32", refuse=refused(name, "may leave")),       # abs(INT_MIN) wraps
            unary(g, name, "i8", refuse=refused(name, "may leave"))]


@cases("stablehlo.sign")
def _sign(name):
    g = Gen(name)
    return [unary(g, name, "f32"), unary(g, name, "i32"), unary(g, name, "i64", shape=(5,)), unary(g, name, "i8")]


@cases("stablehlo.not")
def _not(name):
    """The issue's case: of an i32, ``not`` is ``-1 - x`` (bitwise), not ``1 - x``."""
    g = Gen(name)
    return [unary(g, name, "i1"), unary(g, name, "i32"), unary(g, name, "i8"), unary(g, name, "ui8"),
            unary(g, name, "ui32"), unary(g, name, "i64", shape=(3,))]


@cases("stablehlo.reduce_precision")
def _reduce_precision(name):
    g = Gen(name)
    return [unary(g, name, "f32", attrs=", format = e8m23"), unary(g, name, "f16", attrs=", format = e5m10"),
            unary(g, name, "f32", attrs=", format = e5m2", refuse=refused(name, "rounds f32")),
            unary(g, name, "f32", attrs=", format = e8m7", refuse=refused(name, "rounds f32")),
            unary(g, name, "f32", attrs=", format = e5m10", refuse=refused(name, "rounds f32"))]


@cases("stablehlo.is_finite")
def _is_finite(name):
    """1 for a provably finite argument (an input, a max of inputs, a constant), 0 of
    an infinity, refused of a value that may be inf or NaN (a log, a sum)."""
    g = Gen(name)
    s = g.shape(2)
    f, b = ty(s, "f32"), ty(s, "i1")
    return [
        unary(g, name, "f32", out="i1"),
        Case("max, tanh, negate of inputs", [g.arg("a", s, "f32"), g.arg("b", s, "f32")],
             ["%0 = stablehlo.maximum %a, %b : " + f, "%1 = stablehlo.tanh %0 : " + f, "%2 = stablehlo.negate %1 : " + f,
              f"%3 = stablehlo.is_finite %2 : ({f}) -> {b}"], [("3", b)]),
        Case("of +inf", [g.arg("a", s, "f32")],
             [f"%c = stablehlo.constant dense<0x7F800000> : {f}", f"%0 = stablehlo.is_finite %c : ({f}) -> {b}"],
             [("0", b)]),
        Case("of a log (the issue's case)", [g.arg("a", s, "f32")],
             [f"%c = stablehlo.constant dense<4.0> : {f}", "%0 = stablehlo.add %a, %c : " + f,
              "%1 = stablehlo.log %0 : " + f, f"%2 = stablehlo.is_finite %1 : ({f}) -> {b}"], [("2", b)],
             refused(name, "not provably finite")),
        Case("of a sum (may overflow)", [g.arg("a", s, "f32")],
             ["%0 = stablehlo.add %a, %a : " + f, f"%1 = stablehlo.is_finite %0 : ({f}) -> {b}"], [("1", b)],
             refused(name, "not provably finite")),
    ]


@cases("stablehlo.add")
def _add(name):
    g = Gen(name)
    return [binary(g, name, "f32"), binary(g, name, "f16"), binary(g, name, "i1", refuse=refused(name, "add of booleans")), narrow_ints(g, name),
            narrow_ints(g, name, "ui16", "ui8"),
            binary(g, name, "i32", refuse=refused(name, "may leave")),
            binary(g, name, "ui8", refuse=refused(name, "may leave"))]


@cases("stablehlo.subtract")
def _subtract(name):
    g = Gen(name)
    return [binary(g, name, "f32"), binary(g, name, "bf16"), narrow_ints(g, name), narrow_ints(g, name, "i16", "i8"),
            binary(g, name, "i32", refuse=refused(name, "may leave")), _wrapping_unsigned_subtract(g)]


def _wrapping_unsigned_subtract(g):
    s = g.shape(1)
    return Case("ui32 from ui8 (may go below 0)", [g.arg("a0", s, "ui8"), g.arg("a1", s, "ui8")],
                [f"%c0 = stablehlo.convert %a0 : ({ty(s, 'ui8')}) -> {ty(s, 'ui32')}",
                 f"%c1 = stablehlo.convert %a1 : ({ty(s, 'ui8')}) -> {ty(s, 'ui32')}",
                 f"%0 = stablehlo.subtract %c0, %c1 : {ty(s, 'ui32')}"], [("0", ty(s, "ui32"))],
                refused("stablehlo.subtract", "may leave"))


@cases("stablehlo.multiply")
def _multiply(name):
    g = Gen(name)
    return [binary(g, name, "f32"), binary(g, name, "f64"), binary(g, name, "i1"), narrow_ints(g, name),
            narrow_ints(g, name, "i32", "i16"),
            binary(g, name, "i32", refuse=refused(name, "may leave")),
            Case("i16 from ui8 (255 * 255 overflows)", *_mul_i16(g), refuse=refused(name, "may leave"))]


def _mul_i16(g):
    s = g.shape(1)
    return ([g.arg("a0", s, "ui8"), g.arg("a1", s, "ui8")],
            [f"%c0 = stablehlo.convert %a0 : ({ty(s, 'ui8')}) -> {ty(s, 'i16')}",
             f"%c1 = stablehlo.convert %a1 : ({ty(s, 'ui8')}) -> {ty(s, 'i16')}",
             f"%0 = stablehlo.multiply %c0, %c1 : {ty(s, 'i16')}"], [("0", ty(s, "i16"))])


@cases("stablehlo.divide")
def _divide(name):
    g = Gen(name)
    return [binary(g, name, "f32", kinds=("normal", "away")), binary(g, name, "f16", kinds=("normal", "away")),
            binary(g, name, "i32", refuse=refused(name, "integer division"))]


@cases("stablehlo.and", "stablehlo.or", "stablehlo.xor")
def _logic(name):
    g = Gen(name)
    return [binary(g, name, "i1"), binary(g, name, "i1", shape=()),
            binary(g, name, "i32", refuse=refused(name, "bitwise")),
            binary(g, name, "ui8", refuse=refused(name, "bitwise"))]


@cases("stablehlo.maximum", "stablehlo.minimum")
def _max_min(name):
    g = Gen(name)
    s = g.shape(2)
    f = ty(s, "f32")
    inf = "0xFF800000" if name.endswith("maximum") else "0x7F800000"
    return [binary(g, name, "f32"), binary(g, name, "i32"), binary(g, name, "ui32"), binary(g, name, "i1"),
            binary(g, name, "bf16"),
            Case("with the identity infinity", [g.arg("a", s, "f32")],
                 [f"%c = stablehlo.constant dense<{inf}> : {f}", f"%0 = {name} %c, %a : {f}"], [("0", f)])]


@cases("stablehlo.clamp")
def _clamp(name):
    g = Gen(name)
    s = g.shape(2)
    f, sc = ty(s, "f32"), ty((), "f32")
    i = ty(s, "i32")
    return [
        Case("scalar bounds", [g.arg("lo", (), "f32"), g.arg("x", s, "f32"), g.arg("hi", (), "f32")],
             [f"%0 = stablehlo.clamp %lo, %x, %hi : ({sc}, {f}, {sc}) -> {f}"], [("0", f)]),
        Case("tensor bounds (some lo > hi)", [g.arg("lo", s, "f32"), g.arg("x", s, "f32"), g.arg("hi", s, "f32")],
             [f"%0 = stablehlo.clamp %lo, %x, %hi : {f}"], [("0", f)]),
        Case("i32 over its whole range", [g.arg("lo", s, "i32"), g.arg("x", s, "i32"), g.arg("hi", s, "i32")],
             [f"%0 = stablehlo.clamp %lo, %x, %hi : {i}"], [("0", i)]),
    ]


@cases("stablehlo.power")
def _power(name):
    g = Gen(name)
    s = g.shape(2)
    f, i = ty(s, "f32"), ty(s, "i32")

    def const_power(e, kind, dtype="f32"):
        t = ty(s, dtype)
        return Case(f"x ** {e}", [g.arg("a", s, dtype, kind)],
                    [f"%e = stablehlo.constant dense<{e}> : {t}", f"%0 = stablehlo.power %a, %e : {t}"], [("0", t)])
    bounded = Case("i32 from i8, squared", [g.arg("a", s, "i8")],
                   [f"%c = stablehlo.convert %a : ({ty(s, 'i8')}) -> {i}", f"%e = stablehlo.constant dense<2> : {i}",
                    f"%0 = stablehlo.power %c, %e : {i}"], [("0", i)])
    negative = Case("i32 to the power -1", [g.arg("a", s, "i8")],
                    [f"%c = stablehlo.convert %a : ({ty(s, 'i8')}) -> {i}", f"%e = stablehlo.constant dense<-1> : {i}",
                     f"%0 = stablehlo.power %c, %e : {i}"], [("0", i)], refused(name, "an integer power"))
    return [const_power("2.000000e+00", "normal"), const_power("3.000000e+00", "normal"),
            const_power("5.000000e-01", "positive"), const_power("-1.500000e+00", "positive"),
            const_power("0.000000e+00", "normal"), bounded, negative,
            binary(g, name, "f32", kinds=("positive", "normal"), refuse=refused(name, "the exponent must be a constant"))]


_DIRS = ("EQ", "NE", "LT", "LE", "GT", "GE")


@cases("stablehlo.compare")
def _compare(name):
    g = Gen(name)
    out = []
    for dtype, ctype in (("f32", "FLOAT"), ("i32", "SIGNED"), ("ui32", "UNSIGNED"), ("i1", "UNSIGNED"),
                         ("f16", "FLOAT"), ("i8", "SIGNED")):
        s = g.shape(1, 3, 6)
        a = g.values(s, dtype)
        b = np.where(g.rng.random(s) < 0.4, a, g.values(s, dtype)).astype(a.dtype)     # ties are frequent
        body = [f"%{d} = stablehlo.compare {d}, %a, %b, {ctype} : ({ty(s, dtype)}, {ty(s, dtype)}) -> {ty(s, 'i1')}"
                for d in _DIRS]
        out.append(Case(f"{dtype} {ctype}", [("a", s, dtype, a), ("b", s, dtype, b)], body,
                        [(d, ty(s, "i1")) for d in _DIRS]))
    s = g.shape(1)
    f, b = ty(s, "f32"), ty(s, "i1")
    out.append(Case("TOTALORDER", [g.arg("a", s, "f32"), g.arg("b", s, "f32")],
                    [f"%0 = stablehlo.compare LT, %a, %b, TOTALORDER : ({f}, {f}) -> {b}"], [("0", b)],
                    refused(name, "a TOTALORDER comparison")))
    out.append(Case("isnan of an input", [g.arg("a", s, "f32")],
                    [f"%0 = stablehlo.compare NE, %a, %a, FLOAT : ({f}, {f}) -> {b}"], [("0", b)]))
    out.append(Case("isnan of a log", [g.arg("a", s, "f32")],
                    [f"%l = stablehlo.log %a : {f}", f"%0 = stablehlo.compare NE, %l, %l, FLOAT : ({f}, {f}) -> {b}"],
                    [("0", b)], refused(name, "a NaN test")))
    return out


@cases("stablehlo.select")
def _select(name):
    g = Gen(name)
    out = []
    for dtype in ("f32", "i32", "i1", "ui8"):
        s = g.shape(2)
        out.append(Case(f"select {dtype}", [g.arg("p", s, "i1"), g.arg("a", s, dtype), g.arg("b", s, dtype)],
                        [f"%0 = stablehlo.select %p, %a, %b : {ty(s, 'i1')}, {ty(s, dtype)}"], [("0", ty(s, dtype))]))
    s = g.shape(2)
    out.append(Case("scalar predicate", [g.arg("p", (), "i1"), g.arg("a", s, "f32"), g.arg("b", s, "f32")],
                    [f"%0 = stablehlo.select %p, %a, %b : {ty((), 'i1')}, {ty(s, 'f32')}"], [("0", ty(s, "f32"))]))
    return out


@cases("stablehlo.convert")
def _convert(name):
    g = Gen(name)
    exact = [("f16", "f32"), ("bf16", "f32"), ("f32", "f64"), ("f16", "f64"), ("f32", "f32"), ("i8", "i32"),
             ("ui8", "i16"), ("ui32", "i64"), ("i8", "f32"), ("i8", "f16"), ("ui8", "bf16"), ("i16", "f32"),
             ("i32", "f64"), ("f32", "i1"), ("i32", "i1"), ("i1", "f32"), ("i1", "i32"), ("f16", "i1")]
    refused_ = [("f32", "f16", "narrows"), ("f32", "bf16", "narrows"), ("f16", "bf16", "narrows"),
                ("bf16", "f16", "narrows"), ("f64", "f32", "narrows"), ("f32", "i32", "rounds"),
                ("i32", "i8", "may wrap"), ("i32", "ui32", "may wrap"), ("i32", "f32", "may round"),
                ("i16", "f16", "may round"), ("ui64", "i64", "may wrap")]
    out = [unary(g, name, s, out=d) for s, d in exact]
    out += [unary(g, name, s, out=d, refuse=refused(name, w)) for s, d, w in refused_]
    s = g.shape(1)
    out.append(Case("f32 -> f16 -> f32 round trip (the issue's case)", [g.arg("a", s, "f32")],
                    [f"%0 = stablehlo.convert %a : ({ty(s, 'f32')}) -> {ty(s, 'f16')}",
                     f"%1 = stablehlo.convert %0 : ({ty(s, 'f16')}) -> {ty(s, 'f32')}"], [("1", ty(s, "f32"))],
                    refused(name, "narrows")))
    return out


@cases("stablehlo.constant")
def _constant(name):
    g = Gen(name)
    s = (3, 4)

    def const(value, dtype, shape=s):
        t = ty(shape, dtype)
        return Case(f"{value} : {t}"[:60], [g.arg("a", shape, dtype)],
                    [f"%c = stablehlo.constant dense<{value}> : {t}", "%0 = stablehlo.maximum %a, %c : " + t], [("0", t)])
    dense = g.rng.standard_normal(s).round(3).tolist()
    big = g.rng.standard_normal((20, 15)).astype(np.float32).tolist()
    ints = g.rng.integers(-2 ** 31, 2 ** 31, s).tolist()
    return [const("1.000000e-01", "f32"), const("0.1", "f16"), const("0.1", "bf16"), const(dense, "f32"),
            const(big, "f32", (20, 15)), const(ints, "i32"), const("4294967295", "ui32"), const("-7", "i8"),
            const("[" + ", ".join(["[true, false, true, true]"] * 3) + "]", "i1"), const("true", "i1"), const("1.000000e-01", "f64"),
            const([[4294967295, 0, 1, 7]] * 3, "ui32")]


@cases("stablehlo.iota")
def _iota(name):
    g = Gen(name)
    out = []
    for dtype in ("i32", "f32", "ui8", "f16"):
        s = g.shape(3, 1, 5)
        t = ty(s, dtype)
        out.append(Case(f"iota {dtype}", [g.arg("a", s, dtype)],
                        [f"%i = stablehlo.iota dim = {int(g.rng.integers(0, 3))} : {t}",
                         f"%0 = stablehlo.maximum %a, %i : {t}"], [("0", t)]))
    t = ty((300,), "bf16")
    out.append(Case("iota to 299 in bf16", [], [f"%0 = stablehlo.iota dim = 0 : {t}"], [("0", t)],
                    refused(name, "iota up to 299 in bf16 rounds")))
    out.append(Case("ui8 iota of 300", [], [f"%0 = stablehlo.iota dim = 0 : {ty((300,), 'ui8')}"],
                    [("0", ty((300,), "ui8"))], refused(name, "may leave")))
    return out


def _structural(g, name, make, dtypes=("f32", "i32", "i1")):
    return [make(g, dt) for dt in dtypes]


@cases("stablehlo.broadcast_in_dim")
def _broadcast(name):
    def make(g, dt):
        s = g.shape(2)
        shape = (int(g.rng.integers(1, 4)), s[0], int(g.rng.integers(1, 4)), s[1])
        src = (1 if g.rng.random() < 0.3 else s[0], s[1])
        return Case(f"broadcast {dt}", [g.arg("a", src, dt)],
                    [f"%0 = stablehlo.broadcast_in_dim %a, dims = [1, 3] : ({ty(src, dt)}) -> {ty(shape, dt)}"],
                    [("0", ty(shape, dt))])
    g = Gen(name)
    scalar = Case("a scalar", [g.arg("a", (), "f32")],
                  [f"%0 = stablehlo.broadcast_in_dim %a, dims = [] : ({ty((), 'f32')}) -> {ty((2, 3), 'f32')}"],
                  [("0", ty((2, 3), "f32"))])
    return _structural(g, name, make) + [scalar]


@cases("stablehlo.reshape")
def _reshape(name):
    def make(g, dt):
        s = g.shape(3, 1, 4)
        n = int(np.prod(s))
        out = (n,) if g.rng.random() < 0.3 else (s[2], s[0] * s[1]) if g.rng.random() < 0.5 else (s[0], 1, s[1] * s[2])
        return Case(f"reshape {dt}", [g.arg("a", s, dt)],
                    [f"%0 = stablehlo.reshape %a : ({ty(s, dt)}) -> {ty(out, dt)}"], [("0", ty(out, dt))])
    g = Gen(name)
    return _structural(g, name, make) + _structural(g, name, make, ("f32", "ui16"))


@cases("stablehlo.transpose")
def _transpose(name):
    def make(g, dt):
        s = g.shape(3, 1, 4)
        perm = [int(p) for p in g.rng.permutation(3)]
        out = tuple(s[p] for p in perm)
        return Case(f"transpose {perm} {dt}", [g.arg("a", s, dt)],
                    [f"%0 = stablehlo.transpose %a, dims = {perm} : ({ty(s, dt)}) -> {ty(out, dt)}"],
                    [("0", ty(out, dt))])
    g = Gen(name)
    return _structural(g, name, make) + _structural(g, name, make, ("f32", "f16"))


@cases("stablehlo.reverse")
def _reverse(name):
    def make(g, dt):
        s = g.shape(3, 1, 4)
        dims = sorted({int(d) for d in g.rng.integers(0, 3, 2)})
        return Case(f"reverse {dims} {dt}", [g.arg("a", s, dt)],
                    [f"%0 = stablehlo.reverse %a, dims = {dims} : {ty(s, dt)}"], [("0", ty(s, dt))])
    g = Gen(name)
    return _structural(g, name, make)


@cases("stablehlo.slice")
def _slice(name):
    def make(g, dt):
        s = g.shape(2, 3, 7)
        start = [int(g.rng.integers(0, d)) for d in s]
        limit = [int(g.rng.integers(a + 1, d + 1)) for a, d in zip(start, s)]
        strides = [int(g.rng.integers(1, 4)) for _ in s]
        out = tuple(-(-(lim - a) // st) for a, lim, st in zip(start, limit, strides))
        return Case(f"slice {start}:{limit}:{strides} {dt}", [g.arg("a", s, dt)],
                    [f"%0 = stablehlo.slice %a [{', '.join(f'{a}:{b}:{c}' for a, b, c in zip(start, limit, strides))}]"
                     f" : ({ty(s, dt)}) -> {ty(out, dt)}"], [("0", ty(out, dt))])
    g = Gen(name)
    return _structural(g, name, make) + _structural(g, name, make, ("f32", "i8"))


@cases("stablehlo.concatenate")
def _concatenate(name):
    def make(g, dt):
        s = g.shape(2)
        dim = int(g.rng.integers(0, 2))
        sizes = [int(g.rng.integers(1, 4)) for _ in range(3)]
        shapes = [tuple(k if d == dim else s[d] for d in range(2)) for k in sizes]
        out = tuple(sum(sizes) if d == dim else s[d] for d in range(2))
        args = [g.arg(f"a{k}", sh, dt) for k, sh in enumerate(shapes)]
        return Case(f"concatenate dim {dim} {dt}", args,
                    [f"%0 = stablehlo.concatenate %a0, %a1, %a2, dim = {dim} : "
                     f"({', '.join(ty(sh, dt) for sh in shapes)}) -> {ty(out, dt)}"], [("0", ty(out, dt))])
    g = Gen(name)
    return _structural(g, name, make)


@cases("stablehlo.pad")
def _pad(name):
    def make(g, dt):
        s = g.shape(2, 2, 5)
        low = [int(g.rng.integers(-1, 3)) for _ in s]
        high = [int(g.rng.integers(-1, 3)) for _ in s]
        interior = [int(g.rng.integers(0, 3)) for _ in s]
        out = tuple(lo + hi + d + (d - 1) * it for lo, hi, d, it in zip(low, high, s, interior))
        return Case(f"pad {low} {high} {interior} {dt}", [g.arg("a", s, dt), g.arg("v", (), dt)],
                    [f"%0 = stablehlo.pad %a, %v, low = {low}, high = {high}, interior = {interior} : "
                     f"({ty(s, dt)}, {ty((), dt)}) -> {ty(out, dt)}"], [("0", ty(out, dt))])
    g = Gen(name)
    return [make(g, dt) for dt in ("f32", "f32", "f32", "i32", "i32", "i1")]


@cases("stablehlo.custom_call")
def _custom_call(name):
    g = Gen(name)
    s = g.shape(2)
    t = ty(s, "f32")
    return [Case("Sharding", [g.arg("a", s, "f32")],
                 [f'%0 = stablehlo.custom_call @Sharding(%a) {{mhlo.sharding = "{{replicated}}"}} : ({t}) -> {t}'],
                 [("0", t)]),
            Case("another target", [g.arg("a", s, "f32")],
                 [f"%0 = stablehlo.custom_call @my_kernel(%a) : ({t}) -> {t}"], [("0", t)],
                 refused(name, "custom_call @my_kernel is not supported"))]


@cases("sdy.sharding_constraint")
def _sharding_constraint(name):
    g = Gen(name)
    s = (4, 2)
    t = ty(s, "f32")
    return [Case("replicated", [g.arg("a", s, "f32")],
                 [f"%0 = sdy.sharding_constraint %a <@mesh, [{{}}, {{}}]> : {t}", f"%1 = stablehlo.tanh %0 : {t}"],
                 [("1", t)], prelude='sdy.mesh @mesh = <["x"=1]>\n')]


@cases("stablehlo.optimization_barrier")
def _barrier(name):
    g = Gen(name)
    s = g.shape(2)
    f, i = ty(s, "f32"), ty(s, "i32")
    return [Case("two values", [g.arg("a", s, "f32"), g.arg("b", s, "i32")],
                 [f"%0:2 = stablehlo.optimization_barrier %a, %b : {f}, {i}"], [("0#0", f), ("0#1", i)])]


def _dims(name, vals):
    return f"{name} = [{', '.join(map(str, vals))}]"


@cases("stablehlo.dot_general")
def _dot_general(name):
    g = Gen(name)

    def make(dtype, src=None, extra="", refuse=None, batch=True):
        b, m, k, n = (int(v) for v in g.rng.integers(1, 5, 4))
        sa, sb = ((b, m, k), (b, k, n)) if batch else ((m, k), (k, n))
        so = (b, m, n) if batch else (m, n)
        dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batch else "contracting_dims = [1] x [0]"
        if src:
            args = [g.arg("a0", sa, src), g.arg("b0", sb, src)]
            body = [f"%a = stablehlo.convert %a0 : ({ty(sa, src)}) -> {ty(sa, dtype)}",
                    f"%b = stablehlo.convert %b0 : ({ty(sb, src)}) -> {ty(sb, dtype)}"]
        else:
            args, body = [g.arg("a", sa, dtype), g.arg("b", sb, dtype)], []
        body.append(f"%0 = stablehlo.dot_general %a, %b, {dims}{extra} : "
                    f"({ty(sa, dtype)}, {ty(sb, dtype)}) -> {ty(so, dtype)}")
        return Case(f"dot_general {dtype} {extra}", args, body, [("0", ty(so, dtype))], refuse)
    return [make("f32"), make("f32", batch=False), make("f32", extra=", precision = [HIGHEST, DEFAULT]"),
            make("f16"), make("i32", "i8"), make("i32", refuse=refused(name, "may leave")),
            make("f32", extra=", algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, "
                 "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
                 "num_primitive_operations = 1, allow_imprecise_accumulation = false>",
                 refuse=refused(name, "attribute algorithm not modeled"))]


@cases("stablehlo.dot")
def _dot(name):
    g = Gen(name)
    out = []
    for sa, sb, so in (((3, 4), (4, 2), (3, 2)), ((3, 4), (4,), (3,)), ((4,), (4, 2), (2,)), ((4,), (4,), ())):
        out.append(Case(f"dot {sa} {sb}", [g.arg("a", sa, "f32"), g.arg("b", sb, "f32")],
                        [f"%0 = stablehlo.dot %a, %b : ({ty(sa, 'f32')}, {ty(sb, 'f32')}) -> {ty(so, 'f32')}"],
                        [("0", ty(so, "f32"))]))
    return out


def _reduce_case(g, what, dtype, body_op, init, dims, shape, src=None, refuse=None):
    out = tuple(d for k, d in enumerate(shape) if k not in dims)
    t, r, sc = ty(shape, dtype), ty(out, dtype), ty((), dtype)
    args = [g.arg("a0" if src else "a", shape, src or dtype)]
    body = [f"%a = stablehlo.convert %a0 : ({ty(shape, src)}) -> {t}"] if src else []
    body += [f"%init = stablehlo.constant dense<{init}> : {sc}",
             f"%0 = stablehlo.reduce(%a init: %init) applies {body_op} across dimensions = {list(dims)} : "
             f"({t}, {sc}) -> {r}"]
    return Case(what, args, body, [("0", r)], refuse)


@cases("stablehlo.reduce")
def _reduce(name):
    g = Gen(name)
    s = g.shape(3, 2, 4)
    return [_reduce_case(g, "sum", "f32", "stablehlo.add", "0.000000e+00", (0, 2), s),
            _reduce_case(g, "max", "f32", "stablehlo.maximum", "0xFF800000", (1,), s),
            _reduce_case(g, "min with a finite start", "f32", "stablehlo.minimum", "5.000000e-01", (0, 1, 2), s),
            _reduce_case(g, "i32 sum of i8", "i32", "stablehlo.add", "0", (2,), s, src="i8"),
            _reduce_case(g, "i32 max", "i32", "stablehlo.maximum", "-2147483648", (0,), s),
            _reduce_case(g, "any (or)", "i1", "stablehlo.or", "false", (1,), s),
            _reduce_case(g, "all (and)", "i1", "stablehlo.and", "true", (0, 2), s),
            _reduce_case(g, "boolean add (or)", "i1", "stablehlo.add", "false", (2,), s),
            _reduce_case(g, "i32 sum", "i32", "stablehlo.add", "0", (2,), s, refuse=refused(name, "may leave")),
            _reduce_case(g, "a sum from 1", "f32", "stablehlo.add", "1.000000e+00", (2,), s,
                         refuse=refused(name, "a sum whose initial value is not the constant 0")),
            _reduce_case(g, "bitwise or of i32", "i32", "stablehlo.or", "0", (2,), s,
                         refuse=refused(name, "a reduction by bitwise"))]


def _reduce_window_case(g, what, body_op, init, window, strides, padding=None, base=None, wdil=None,
                        dtype="f32", refuse=None):
    s = (2, 5, 6)
    pad = padding or [[0, 0]] * 3
    base = base or [1] * 3
    wdil = wdil or [1] * 3
    out = []
    for d in range(3):
        dilated = (s[d] - 1) * base[d] + 1 + pad[d][0] + pad[d][1]
        eff = (window[d] - 1) * wdil[d] + 1
        out.append((dilated - eff) // strides[d] + 1)
    t, r, sc = ty(s, dtype), ty(out, dtype), ty((), dtype)
    attrs = (f"window_dimensions = array<i64: {', '.join(map(str, window))}>, "
             f"window_strides = array<i64: {', '.join(map(str, strides))}>, "
             f"base_dilations = array<i64: {', '.join(map(str, base))}>, "
             f"window_dilations = array<i64: {', '.join(map(str, wdil))}>, "
             f"padding = dense<{pad}> : tensor<3x2xi64>")
    body = [f"%init = stablehlo.constant dense<{init}> : {sc}",
            f'%0 = "stablehlo.reduce_window"(%a, %init) <{{{attrs}}}> ({{',
            f"  ^bb0(%x: {sc}, %y: {sc}):",
            f"    %m = {body_op} %x, %y : {sc}",
            f"    stablehlo.return %m : {sc}",
            f"  }}) : ({t}, {sc}) -> {r}"]
    return Case(what, [g.arg("a", s, dtype)], body, [("0", r)], refuse)


@cases("stablehlo.reduce_window")
def _reduce_window(name):
    g = Gen(name)
    return [_reduce_window_case(g, "max pool", "stablehlo.maximum", "0xFF800000", [1, 2, 2], [1, 2, 2]),
            _reduce_window_case(g, "sum with padding", "stablehlo.add", "0.000000e+00", [1, 3, 3], [1, 1, 1],
                                [[0, 0], [1, 1], [2, 0]]),
            _reduce_window_case(g, "sum, base and window dilation", "stablehlo.add", "0.000000e+00", [1, 2, 2],
                                [1, 1, 2], [[0, 0], [1, 0], [0, 1]], [1, 2, 1], [1, 1, 2]),
            _reduce_window_case(g, "min, strided and dilated", "stablehlo.minimum", "0x7F800000", [2, 2, 3], [1, 2, 1],
                                wdil=[1, 2, 1]),
            _reduce_window_case(g, "i32 max", "stablehlo.maximum", "-2147483648", [1, 2, 3], [1, 1, 2], dtype="i32"),
            _reduce_window_case(g, "max pool with padding", "stablehlo.maximum", "0xFF800000", [1, 2, 2], [1, 2, 2],
                                [[0, 0], [1, 0], [0, 0]], refuse=refused(name, "max / min pooling with padding")),
            _reduce_window_case(g, "sum from 1", "stablehlo.add", "1.000000e+00", [1, 2, 2], [1, 1, 1],
                                refuse=refused(name, "a sum whose initial value"))]


def _conv_case(g, what, lhs, rhs, dn, strides=(1, 1), pad=((0, 0), (0, 0)), ldil=(1, 1), rdil=(1, 1),
               rev=(False, False), fgc=1, bgc=1, dtype="f32", src=None):
    """NHWC x HWIO -> NHWC (``dn`` may permute), output shape computed here."""
    n, h, w, c = lhs
    kh, kw, ci, co = rhs
    oh = ((h - 1) * ldil[0] + 1 + pad[0][0] + pad[0][1] - ((kh - 1) * rdil[0] + 1)) // strides[0] + 1
    ow = ((w - 1) * ldil[1] + 1 + pad[1][0] + pad[1][1] - ((kw - 1) * rdil[1] + 1)) // strides[1] + 1
    out = (n // bgc, oh, ow, co)
    tl, tr, to = ty(lhs, dtype), ty(rhs, dtype), ty(out, dtype)
    args = [g.arg("x0" if src else "x", lhs, src or dtype), g.arg("k0" if src else "k", rhs, src or dtype)]
    body = ([f"%x = stablehlo.convert %x0 : ({ty(lhs, src)}) -> {tl}",
             f"%k = stablehlo.convert %k0 : ({ty(rhs, src)}) -> {tr}"] if src else [])
    revs = ", ".join("true" if r else "false" for r in rev)
    body.append(f"%0 = stablehlo.convolution(%x, %k) dim_numbers = {dn}, window = {{stride = {list(strides)}, "
                f"pad = {[list(p) for p in pad]}, lhs_dilate = {list(ldil)}, rhs_dilate = {list(rdil)}, "
                f"reverse = [{revs}]}} {{batch_group_count = {bgc} : i64, feature_group_count = {fgc} : i64}} : "
                f"({tl}, {tr}) -> {to}")
    return Case(what, args, body, [("0", to)])


_NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"


@cases("stablehlo.convolution")
def _convolution(name):
    g = Gen(name)
    return [_conv_case(g, "plain", (2, 5, 5, 3), (3, 3, 3, 4), _NHWC),
            _conv_case(g, "strided, padded, dilated", (2, 6, 5, 2), (2, 3, 2, 3), _NHWC, (2, 1), ((1, 0), (2, 1)),
                       rdil=(1, 2)),
            _conv_case(g, "lhs dilation (a transposed conv)", (1, 3, 4, 2), (2, 2, 2, 3), _NHWC, pad=((1, 1), (1, 0)),
                       ldil=(2, 2)),
            _conv_case(g, "window reversal", (1, 4, 4, 2), (2, 3, 2, 2), _NHWC, rev=(True, False)),
            _conv_case(g, "feature groups", (2, 4, 4, 4), (2, 2, 2, 6), _NHWC, fgc=2),
            _conv_case(g, "batch groups", (4, 4, 4, 3), (2, 2, 3, 6), _NHWC, bgc=2),
            _conv_case(g, "i32 from i8", (1, 4, 4, 2), (2, 2, 2, 3), _NHWC, dtype="i32", src="i8"),
            _conv_case(g, "output spatial axes swapped", (2, 5, 4, 3), (3, 2, 3, 2),
                       "[b, 0, 1, f]x[0, 1, i, o]->[b, 1, 0, f]")]


# -- running a case ------------------------------------------------------------------------------

def _xla(text, inputs):
    with jax.enable_x64(True):
        parsed = parse(text)
        exe = XlaExecutable(str(parsed.module), signature(parsed))
        return [to_host(x) for x in exe(*inputs)]


def _compare(case, imported, outputs):
    values = {v: np.asarray(x, dtype=np.float64) for v, x in zip(imported.inputs, [a[3] for a in case.args])}
    values.update(imported.constants)
    for (name, t), term, want in zip(case.results, imported.results, outputs):
        got = np.asarray(evaluate(term, {}, values), dtype=np.float64)
        dtype = t.rsplit("x", 1)[-1].rstrip(">") if "x" in t else t[7:-1]
        want = np.asarray(want).astype(np.float64)
        assert got.shape == want.shape, f"{case.what}: result {name} has shape {got.shape}, XLA {want.shape}"
        if dtype in FLOAT_BITS:
            defined = np.isfinite(want)        # outside the model's domain XLA gives inf / NaN
            assert defined.mean() > 0.5, f"{case.what}: XLA gives mostly non-finite values {want}"
            err = np.abs(got - want) / (1 + np.abs(want))
            bad = defined & ~(err <= TOL[dtype])
        else:
            bad = got != want
        if np.any(bad):
            k = tuple(int(i) for i in np.argwhere(bad)[0])
            raise AssertionError(f"{case.what}: result {name} at {list(k)}: imported terms {got[k]!r}, XLA {want[k]!r}"
                                 f"\n{case.text()}")


def run_case(case: Case):
    text = case.text()
    if case.refuse is not None:
        with pytest.raises(StableHLOError) as e:
            import_module(text)
        msg = str(e.value)
        assert re.search(case.refuse, msg), f"{case.what}: refused with {msg!r}, expected /{case.refuse}/"
        assert len(msg.splitlines()) == 1
        return
    imported = import_module(text)
    _compare(case, imported, _xla(text, [a[3] for a in case.args]))


def _literal_text(values, dtype) -> str:
    """``values`` as the text of a dense attribute that parses back to exactly them:
    Python's shortest round-trip decimal of each float (an f32, f16 or bf16 value is
    one float64 exactly), integers in full, ``true``/``false``."""
    def one(v):
        if dtype == "i1":
            return "true" if v else "false"
        if dtype in FLOAT_BITS:
            return repr(float(v))
        return str(int(v))

    def nest(a):
        return one(a) if np.ndim(a) == 0 else "[" + ", ".join(nest(x) for x in a) + "]"
    return nest(np.asarray(values, dtype=object))


def constant_case(case: Case) -> Case:
    """``case`` with every argument a ``stablehlo.constant`` of the same values, so
    that XLA's constant folder, not its compiled kernels, computes the result."""
    consts = [f"%{n} = stablehlo.constant dense<{_literal_text(v, d)}> : {ty(s, d)}" for n, s, d, v in case.args]
    return Case(f"{case.what} (constants)", [], consts + case.body, case.results, prelude=case.prelude)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_on_constants_agrees_with_xla_folding(name):
    """Red team RT23: XLA folds an operation of constants with its own evaluator, which
    can disagree with what its compiled code computes (``true + true`` folded to
    ``false``). Every imported case again with its arguments as constants: imported
    (where the constants' bounds allow more than the arguments did) and equal to
    what XLA computes of that module, or refused with one line. Cases refused on
    arguments are tried too: the constants' own values may be in range."""
    for case in CASES[name](name):
        folded = constant_case(case)
        text = folded.text()
        try:
            imported = import_module(text)
        except StableHLOError as e:
            assert len(str(e).splitlines()) == 1, f"{folded.what}: {e}"
            continue
        _compare(folded, imported, _xla(text, []))


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_agrees_with_xla_or_refuses(name):
    built = CASES[name](name)
    assert built, name
    assert any(c.refuse is None for c in built), f"{name}: no case is imported"
    for case in built:
        run_case(case)


def test_every_rule_has_a_differential_test():
    """The rule table against the cases: a rule added without a differential test
    fails here."""
    missing = sorted(set(RULES) - set(CASES))
    assert not missing, f"rules without a differential test: {missing}"
    assert not set(CASES) - set(RULES), f"cases for rules that do not exist: {sorted(set(CASES) - set(RULES))}"


def test_calls_are_inlined_with_what_is_known_of_their_arguments():
    """``func.call``: the callee sees its arguments' bounds (an i8 widened to i32 may
    be doubled there) and its results come back."""
    g = Gen("func.call")
    s = (3,)
    i8, i32 = ty(s, "i8"), ty(s, "i32")
    text = (f"func.func private @twice(%x: {i32}) -> {i32} {{\n  %0 = stablehlo.add %x, %x : {i32}\n  return %0 : {i32}\n}}\n"
            f"func.func public @main(%a: {i8}) -> {i32} {{\n  %c = stablehlo.convert %a : ({i8}) -> {i32}\n"
            f"  %0 = func.call @twice(%c) : ({i32}) -> {i32}\n  return %0 : {i32}\n}}")
    case = Case("call", [g.arg("a", s, "i8")], [], [("0", i32)])
    _compare(case, import_module(text), _xla(text, [case.args[0][3]]))
    wide = text.replace("%a: tensor<3xi8>", "%a: tensor<3xi32>").replace(f"stablehlo.convert %a : ({i8}) -> {i32}",
                                                                          f"stablehlo.negate %a : {i32}")
    with pytest.raises(StableHLOError, match=refused("stablehlo.negate", "may leave")):
        import_module(wide)


@pytest.mark.parametrize("bad", ["f8E5M2", "complex<f32>"])
def test_unsupported_element_types_are_refused(bad):
    text = (f"func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {{\n"
            f"  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2x{bad}>\n"
            f"  %1 = stablehlo.convert %0 : (tensor<2x{bad}>) -> tensor<2xf32>\n  return %1 : tensor<2xf32>\n}}")
    with pytest.raises(StableHLOError, match=rf"<text>:2:\d+: stablehlo.convert: element type .*{re.escape(bad)}"):
        import_module(text)
