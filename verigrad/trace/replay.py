"""Proof traces read back and replayed (untrusted: a decoder in front of the kernel).

A trace (JSON, written by ``verigrad.trace``) lists *objects* (sizes, indices,
polynomials, function symbols, terms), each built from earlier ones, and *steps*: one
rule application per theorem, naming its premises (earlier steps) and its other
inputs, with the statement the writer says it produced. Replaying builds every object
again through the kernel's public constructors (which check shapes and ranges, and
cannot make a reserved index) and hands every step to the kernel's ``replay_step``,
which applies the rule again and refuses the step unless it states exactly what was
recorded. Nothing in a trace is believed: a forged or edited step either replays to a
true theorem or is refused.

Why this decoder need not be trusted: it only builds objects through the kernel's
constructors and calls ``replay_step``, whose rules check their inputs and which
matches each step's recorded statement against the theorem the rule made (the trusted
part of the replay, ``verigrad.kernel.theorem``). A bug here can make a wrong call, and
then a trace is refused (or replays to another true theorem); it cannot make a
theorem. ``main(paths)`` replays traces and reports each claim; ``verigrad check`` runs
it in a fresh process that loads only the kernel and this module.
"""
from __future__ import annotations

import gc
import json
import sys
from fractions import Fraction

from verigrad.kernel import terms as T
from verigrad.kernel.permutation import Argsort, IntDiv, IntEq
from verigrad.kernel.sizes import IndexVar, KernelError, SizeSym, as_poly, floordiv
from verigrad.kernel.theorem import Condition, _gc_paused, replay_step

FORMAT, VERSION = "verigrad-proof-trace", 1

TERMS = {c.__name__: c for c in (T.Var, T.Num, T.Const, T.IntVal, T.Index, T.Lamda, T.Add, T.Mul, T.Pow, T.Func,
                                 T.Sum, T.ReduceMax, T.Delta, T.IntCond, T.RealCond, T.Apply, T.Deriv, T.Named,
                                 T.Vjp, T.At, Argsort, IntEq, IntDiv)}

# What a replay may load besides the kernel (``verigrad.kernel.*``): this module, and the
# two packages above it as bare namespaces (``verigrad check`` does not run their
# ``__init__``, which would load the printer, the untrusted search and the trace writer).
DECODER = ("verigrad.trace.replay",)
BARE = ("verigrad", "verigrad.trace")
INSTALLED = {"site-packages", "dist-packages"}     # folders of installed packages, not the standard library


class TraceError(KernelError):
    """A trace that does not replay: malformed, or a step that states something else."""


def _int(x) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TraceError(f"{x!r} is not an integer")
    return x


def decode(x, objs):
    """An argument: an int refers to an object; ``["i", k]`` is the integer k, ``["q", n,
    d]`` a rational, ``["t", ...]`` a tuple; strings and booleans are themselves."""
    kind = type(x)          # (exact types: JSON makes no subclasses, and a bool is not a reference)
    if kind is int:
        if not 0 <= x < len(objs):
            raise TraceError(f"reference {x} to an object not yet defined")
        return objs[x]
    if kind is list and x:
        tag = x[0]
        if tag == "t":
            return tuple([decode(v, objs) for v in x[1:]])
        if tag == "i" and len(x) == 2:
            return _int(x[1])
        if tag == "q" and len(x) == 3:
            return Fraction(_int(x[1]), _int(x[2]))
    elif kind is str or kind is bool:
        return x
    raise TraceError(f"malformed argument {x!r}")


def _scalar_fn(name, arity):
    """A function symbol; ``f'0`` is reify's symbol of ``d f / d x_0``, which no user function
    can be named (not an identifier): rebuilt as reify builds it, from a valid ``f``."""
    if "'" in name:
        base, k = name.rsplit("'", 1)
        _scalar_fn(base, arity)
        if not k.isdigit() or int(k) >= arity:
            raise TraceError(f"function symbol {name!r}: not a partial derivative of {base}")
        return T._intern(T.ScalarFn, (name, arity))
    return T.ScalarFn(name, arity)


# Powers a trace may hold: a proof the kernel made never needs more, and the decoder
# multiplies a polynomial out and the kernel expands an integer power of a sum, so a trace
# with ``n ** 1000000000`` would hang the checker (a denial of service, not a verdict).
MAX_POWER = 1024


def _power(k) -> int:
    if abs(k) > MAX_POWER:
        raise TraceError(f"a power of {k}: beyond the {MAX_POWER} a trace may hold")
    return k


def build(entry, objs):
    """One object of the table, from earlier ones."""
    kind, *args = entry
    if kind == "poly":      # [[coefficient, [[symbol, power], ...]], ...]: rebuilt by arithmetic
        mono = args[0][0] if len(args[0]) == 1 else None
        if mono and type(mono[0]) is int and mono[0] == 1 and len(mono[1]) == 1 and type(mono[1][0][1]) is int \
                and mono[1][0][1] == 1:                # a symbol alone (most): itself
            return as_poly(decode(mono[1][0][0], objs))
        total = as_poly(0)
        for coef, mono in args[0]:
            term = as_poly(_int(coef))
            for ref, power in mono:
                for _ in range(_power(_int(power))):
                    term = term * decode(ref, objs)
            total = total + term
        return total
    args = [decode(a, objs) for a in args]
    if kind == "size":
        return SizeSym(*args)
    if kind == "index":
        return IndexVar(*args)
    if kind == "floordiv":  # its value: a // m, simplified as the kernel does
        return floordiv(*args)
    if kind == "scalarfn":
        return _scalar_fn(*args)
    if kind == "tensorfn":
        return T.TensorFn(*args)
    if kind == "fnlam":
        return T.FnLam(*args)
    if kind == "Pow" and len(args) == 2:
        e = args[1].value if isinstance(args[1], T.Num) else args[1]
        if isinstance(e, (int, Fraction)) and not isinstance(e, bool):
            _power(Fraction(e).numerator), _power(Fraction(e).denominator)
    if kind in TERMS:
        return TERMS[kind](*args)
    raise TraceError(f"unknown object kind {kind!r}")


@_gc_paused
def replay(trace: dict) -> list:
    """Replay a trace (parsed JSON): ``[(claim name, Theorem)]``, or ``TraceError``."""
    if not isinstance(trace, dict) or trace.get("format") != FORMAT or trace.get("version") != VERSION:
        raise TraceError(f"not a {FORMAT} of version {VERSION}")
    objs = []
    for k, entry in enumerate(trace.get("objects", [])):
        try:
            if not (isinstance(entry, list) and entry and isinstance(entry[0], str)):
                raise TraceError("malformed entry")
            objs.append(build(entry, objs))
        except Exception as e:  # noqa: BLE001 - whatever breaks, the trace is refused
            raise TraceError(f"object {k}: {e}") from None
    steps = []
    for k, step in enumerate(trace.get("steps", [])):
        try:
            parents = [steps[p] for p in step.get("parents", []) if 0 <= p < k]
            if len(parents) != len(step.get("parents", [])):
                raise TraceError("a premise that is not an earlier step")
            recorded = (decode(step["lhs"], objs), decode(step["rhs"], objs),
                        [decode(h, objs) for h in step.get("hyps", [])],
                        [Condition(c[0], decode(c[1], objs)) for c in step.get("conds", [])])
            th = replay_step(step["rule"], parents, decode(["t", *step.get("args", [])], objs), step.get("choices"),
                             recorded)
        except Exception as e:  # noqa: BLE001 - whatever breaks, the trace is refused
            raise TraceError(f"step {k} ({step.get('rule') if isinstance(step, dict) else '?'}): {e}") from None
        steps.append(th)
    claims = []
    for c in trace.get("claims", []):
        if not (isinstance(c, dict) and isinstance(c.get("step"), int) and 0 <= c["step"] < len(steps)):
            raise TraceError(f"claim {c!r} names no step")
        claims.append((str(c.get("name", "")), steps[c["step"]]))
    return claims


def extra_modules(modules) -> list:
    """The modules in ``modules`` (a ``sys.modules``) that a replay must not load: any of
    verigrad but the kernel and this decoder, ``verigrad`` and ``verigrad.trace`` unless
    bare (their ``__init__`` not run), JAX, and any other installed package's module."""
    out = [m for m in modules if m.startswith("verigrad.") and not m.startswith("verigrad.kernel.")
           and m != "verigrad.kernel" and m not in DECODER + BARE]
    out += [m for m in BARE if getattr(modules.get(m), "__file__", None) is not None]
    # nor anything installed: ``verigrad check`` runs Python without ``site`` (``-S``), whose
    # ``.pth`` hooks would run installed code first (red team RT3-B2: setuptools' editable
    # finder, mapping ``verigrad.*`` to another checkout, and ``_distutils_hack``)
    out += [m for m, mod in modules.items() if not m.startswith("verigrad") and m != "jax"
            and set(str(getattr(mod, "__file__", None) or "").replace("\\", "/").split("/")) & INSTALLED]
    return sorted(out) + ["jax"] * ("jax" in modules)


def load(path) -> dict:
    """The trace at ``path``: its bytes read as UTF-8 JSON, whatever the locale. The process
    that replays a trace and the one that prints its statements must read the same text
    (red team RT20-F1: under a Latin-1 locale the replay read the bytes of ``é`` as two
    characters where the printer read one, and printed ``d(é*é)/dé = é``)."""
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def main(paths) -> int:
    """Replay each trace and print one JSON object per claim (its status, the step that
    proves it, its axioms) or per refused trace. Exit 0 when every trace replays, 1
    otherwise, 2 if anything but the kernel and this decoder was loaded. The statements
    themselves are the trace's recorded objects of that step, which the kernel has just
    matched: the caller (``verigrad check``) prints them with the real printer."""
    T.Term.__repr__ = lambda t: t.skey     # (no printer here: a reason shows a term by its key, not its address)
    bad = 0
    for path in paths:
        try:
            trace = load(path)
            claims = replay(trace)
            if not claims:      # a trace of nothing (certify --proof where nothing is proved): no exit 0 (RT2-D5)
                raise TraceError("the trace states no claim: nothing is proved")
            # What the kernel made is kept until the process ends (its tables intern every
            # term and normal form): moved out of the collector's sight, so that neither
            # the next collection nor the one at exit scans it all again.
            gc.freeze()
        except (OSError, ValueError, TraceError, RecursionError) as e:
            bad += 1
            print(json.dumps({"trace": path, "status": "REFUSED", "reason": str(e)}))
            continue
        for k, (name, th) in enumerate(claims):
            print(json.dumps({"trace": path, "status": "PROVED", "claim": name, "step": trace["claims"][k]["step"],
                              "axioms": th.axioms()}))
    if loaded := extra_modules(sys.modules):
        print(json.dumps({"status": "ERROR", "reason": f"the checker loaded more than the kernel: {loaded}"}))
        return 2
    return 1 if bad else 0
