"""Proof traces: every PROVED result, written out so that it can be replayed (untrusted
writer; the reader is ``verigrad.trace.replay``, untrusted too, and each step is
replayed by the kernel's ``replay_step``).

    from verigrad.trace import write_trace
    write_trace("softmax.trace.json", [("dx = J^T dy", theorem)])

A trace is JSON: a table of objects (sizes, indices, polynomials, function symbols,
hash-consed terms), each built from earlier ones, and the steps: one kernel rule per
theorem, its premises, its other inputs (the untrusted hooks' choices among them, as
data) and the statement it produced. ``verigrad check TRACE...`` replays traces in a
fresh process that loads only the kernel and the reader.
"""
from __future__ import annotations

import hashlib
import json
import os
from fractions import Fraction
from pathlib import Path

from verigrad.kernel import Theorem
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import FloorDiv, IndexVar, Poly, SizeSym
from verigrad.trace.replay import FORMAT, TERMS, VERSION

KERNEL = Path(__file__).resolve().parents[1] / "kernel"


def kernel_digest() -> str:
    """sha256 of the kernel's sources: what a replay trusts."""
    h = hashlib.sha256()
    for f in sorted(KERNEL.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


class _Writer:
    def __init__(self):
        self.objects: list = []
        self.refs: dict = {}        # id(object) -> index in the table
        self.keep: list = []        # the objects, alive while their ids are keys
        self.digests: dict = {}     # id(object) -> its structure's digest (key)

    # -- objects ----------------------------------------------------------------------
    def ref(self, obj) -> int:
        """The table index of ``obj``, adding it (after everything it is built from)."""
        hit = self.refs.get(id(obj))
        if hit is not None:
            return hit
        stack = [(obj, False)]
        while stack:                # post-order without recursion: terms can be deep
            x, ready = stack.pop()
            if id(x) in self.refs:
                continue
            kids = self._kids(x)
            if ready or not kids:
                self.refs[id(x)] = len(self.objects)
                self.objects.append(self._entry(x))
                self.keep.append(x)
            else:
                stack.append((x, True))
                stack.extend((k, False) for k in reversed(kids) if id(k) not in self.refs)
        return self.refs[id(obj)]

    def key(self, obj) -> str:
        """A digest of ``obj``'s structure, for a stable order of a theorem's hypotheses and
        conditions (not its ``skey``: the key of a term with shared parts spells each part
        at every use, and a network's hypotheses ran to gigabytes)."""
        stack = [(obj, False)]
        while stack:
            x, ready = stack.pop()
            if id(x) in self.digests:
                continue
            kids = self._kids(x) if isinstance(x, T.Term) else []
            if ready or not kids:
                parts = [type(x).__name__] + ([self.digests[id(a)] if _is_object(a) else repr(a) for a in _flat(x._args)]
                                              if isinstance(x, T.Term) else [getattr(x, "skey", "")])
                self.digests[id(x)] = hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()
                self.keep.append(x)
            else:
                stack.append((x, True))
                stack.extend((k, False) for k in kids if id(k) not in self.digests)
        return self.digests[id(obj)]

    @staticmethod
    def _kids(x) -> list:
        if isinstance(x, T.Term):
            return [a for a in _flat(x._args) if _is_object(a)]
        if isinstance(x, Poly):
            return [s for mono in x.terms for s, _ in mono]
        if isinstance(x, IndexVar):
            return [x.size]
        if isinstance(x, FloorDiv):
            return [x.a, x.m]
        if isinstance(x, T.TensorFn):
            return [s for sh in x.arg_shapes + (x.out_shape,) for s in sh]
        if isinstance(x, T.FnLam):
            return [*x.params, x.body, x.cot]
        return []

    def _entry(self, x) -> list:
        if isinstance(x, T.Term):
            if type(x).__name__ not in TERMS:
                raise ValueError(f"no trace form for {type(x).__name__}")
            return [type(x).__name__, *(self.arg(a) for a in x._args)]
        if isinstance(x, Poly):
            return ["poly", [[c, [[self.refs[id(s)], k] for s, k in mono]] for mono, c in x.terms.items()]]
        if isinstance(x, SizeSym):
            return ["size", x.name, ["i", x.lower]]
        if isinstance(x, IndexVar):
            if x.tag:
                raise ValueError(f"the kernel-reserved index {x.name} cannot be written to a trace")
            return ["index", x.name, self.refs[id(x.size)]]
        if isinstance(x, FloorDiv):
            return ["floordiv", self.refs[id(x.a)], self.refs[id(x.m)]]
        if isinstance(x, T.ScalarFn):
            return ["scalarfn", x.name, ["i", x.arity]]
        if isinstance(x, T.TensorFn):
            return ["tensorfn", x.name, self.arg(x.arg_shapes), self.arg(x.out_shape)]
        if isinstance(x, T.FnLam):
            return ["fnlam", self.arg(x.params), self.ref(x.body), self.ref(x.cot)]
        raise ValueError(f"no trace form for {x!r}")

    def arg(self, a):
        """An argument: objects by reference, numbers and tuples tagged."""
        if isinstance(a, (bool, str)):
            return a
        if isinstance(a, int):
            return ["i", a]
        if isinstance(a, Fraction):
            return ["q", a.numerator, a.denominator]
        if isinstance(a, (tuple, list)):
            return ["t", *(self.arg(x) for x in a)]
        if _is_object(a):
            return self.ref(a)
        raise ValueError(f"no trace form for the argument {a!r}")

    # -- steps ------------------------------------------------------------------------
    def steps(self, theorems) -> tuple[list, dict]:
        order, index = [], {}
        for root in theorems:
            stack = [(root, False)]
            while stack:
                th, ready = stack.pop()
                if id(th) in index:
                    continue
                if ready or not th.parents:
                    index[id(th)] = len(order)
                    order.append(th)
                else:
                    stack.append((th, True))
                    stack.extend((p, False) for p in reversed(th.parents) if id(p) not in index)
        out = []
        for th in order:
            # a decision's choices are written apart; its plan (the pass that succeeded) when it
            # can be written (None: the replay searches as the proof did)
            plan = th.args[3] if th.rule == "decide" else None
            args = th.args[:2] + (plan,) * (plan is not None and plan[2] is not None) if th.rule == "decide" else th.args
            step = {"rule": th.rule, "parents": [index[id(p)] for p in th.parents],
                    "args": [self.arg(a) for a in args], "lhs": self.ref(th.lhs), "rhs": self.ref(th.rhs)}
            if th.hyps:
                step["hyps"] = [self.arg(h) for h in sorted(th.hyps, key=lambda h: (self.key(h[0]), self.key(h[1])))]
            if th.conds:
                step["conds"] = [[c.kind, self.ref(c.term)]
                                 for c in sorted(th.conds, key=lambda c: (c.kind, self.key(c.term)))]
            if th.rule == "decide":
                step["choices"] = list(th.args[2])
            out.append(step)
        return out, index


def _flat(args):
    for a in args:
        if isinstance(a, tuple):
            yield from _flat(a)
        else:
            yield a


def _is_object(a) -> bool:
    return isinstance(a, (T.Term, Poly, SizeSym, IndexVar, FloorDiv, T.ScalarFn, T.TensorFn, T.FnLam))


def trace_of(claims) -> dict:
    """The trace of ``claims``, a list of ``(name, Theorem)``."""
    claims = list(claims)
    for name, th in claims:
        if not isinstance(th, Theorem):
            raise TypeError(f"claim {name!r} is not a theorem")
    w = _Writer()
    steps, index = w.steps([th for _, th in claims])
    return {"format": FORMAT, "version": VERSION, "kernel": kernel_digest(),
            "objects": w.objects, "steps": steps,
            "claims": [{"name": name, "step": index[id(th)]} for name, th in claims]}


def write_trace(path, claims) -> Path:
    """Write the trace of ``claims`` (``[(name, Theorem)]``) to ``path`` atomically."""
    import tempfile
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a temporary file of its own: two writers of one path never write into one file
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o644)
        with os.fdopen(fd, "w") as f:
            json.dump(trace_of(claims), f, separators=(",", ":"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
