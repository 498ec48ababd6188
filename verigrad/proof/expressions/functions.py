"""Named functions of the proof language: a table from name to definition.

Each entry gives the function's definition as an expression of the proof language
(``softmax(x) = Lamda[i:n](exp(x[i]) / Sum[j:n](exp(x[j])))``), which is both what it
compiles to (through that expression) and what the ``definition`` tactic unfolds it
to. Elementary functions (``exp log tanh erf``) compile straight to the kernel's.
Vector functions (``softmax``, ``layer_norm`` ...) act on the last axis, row by row.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from verigrad.kernel import terms as T

from ..errors import ProofError
from .arithmetic import sqrt
from .atoms import Number, SizeExpr, as_expr, pi
from .binders import Lamda, ReduceMax, Sum
from .calculus import Derivative
from .indicators import Bool
from .integers import IntMixin
from .kernel_terms import at, int_term, lam, shape_str
from .node import Expr
from .symbols import TensorSymbol, fresh_symbol


def _rowwise(x: Expr, vec: Callable[[Expr], Expr]) -> Expr:
    """Apply a vector function to the last axis of ``x`` (row by row)."""
    if len(x.shape) == 1:
        return vec(x)
    if len(x.shape) == 2:
        r = fresh_symbol(x.shape[0], x, prefer="ipqab")
        return Lamda(vec(x[r]), [(r, x.shape[0])])
    raise ProofError(f"a vector function of the rank-{len(x.shape)} tensor {x}")


# -- definitions (each returns an expression of the language) ----------------------------

def _softmax(x):
    def vec(v):
        n = v.shape[0]
        i = fresh_symbol(n, v)
        j = fresh_symbol(n, v, i)
        return Lamda(exp(v[i]) / Sum(exp(v[j]), [(j, n)]), [(i, n)])
    return _rowwise(x, vec)


def _logsumexp(x):
    def vec(v):
        n = v.shape[0]
        j = fresh_symbol(n, v, prefer="jkl")
        return log(Sum(exp(v[j]), [(j, n)]))
    if len(x.shape) == 1:
        return vec(x)
    r = fresh_symbol(x.shape[0], x, prefer="ipq")
    return Lamda(vec(x[r]), [(r, x.shape[0])])


def _log_softmax(x):
    def vec(v):
        n = v.shape[0]
        i = fresh_symbol(n, v)
        return Lamda(v[i] - logsumexp(v), [(i, n)])
    return _rowwise(x, vec)


def _total(x):
    n = x.shape[0]
    j = fresh_symbol(n, x, prefer="jkl")
    return Sum(x[j], [(j, n)])


def _mean(x):
    if len(x.shape) != 1:
        raise ProofError(f"mean of {x}: a vector is expected (use Lamda for rows)")
    return _total(x) / SizeExpr(x.shape[0])


def _var(x):
    n = x.shape[0]
    j = fresh_symbol(n, x, prefer="jkl")
    return Sum((x[j] - mean(x)) ** 2, [(j, n)]) / SizeExpr(x.shape[0])


def _layer_norm(x, eps, gamma=None, beta=None):
    def vec(v):
        n = v.shape[0]
        i = fresh_symbol(n, v, eps, *(g for g in (gamma, beta) if g is not None))
        y = (v[i] - mean(v)) / sqrt(var(v) + eps)
        if gamma is not None:
            y = y * gamma[i]
        if beta is not None:
            y = y + beta[i]
        return Lamda(y, [(i, n)])
    return _rowwise(x, vec)


def _rms_norm(x, eps, gamma=None):
    def vec(v):
        n = v.shape[0]
        i = fresh_symbol(n, v, eps, *(g for g in (gamma,) if g is not None))
        j = fresh_symbol(n, v, eps, i, prefer="jkl")
        ms = Sum(v[j] ** 2, [(j, n)]) / SizeExpr(v.shape[0])
        y = v[i] / sqrt(ms + eps)
        if gamma is not None:
            y = y * gamma[i]
        return Lamda(y, [(i, n)])
    return _rowwise(x, vec)


def _trace(A):
    if len(A.shape) != 2 or A.shape[0] is not A.shape[1]:
        raise ProofError(f"trace of {A} of shape {shape_str(A.shape)}: a square matrix is expected")
    j = fresh_symbol(A.shape[0], A, prefer="jkl")
    return Sum(A[j, j], [(j, A.shape[0])])


def vmax(x) -> Expr:
    """The largest entry of a vector (``ReduceMax``)."""
    x = as_expr(x)
    if len(x.shape) != 1:
        raise ProofError(f"vmax of {x}: a vector is expected")
    j = fresh_symbol(x.shape[0], x, prefer="jklm")
    return ReduceMax(x[j], [(j, x.shape[0])])


def grad(f, x) -> Expr:
    """The gradient of a scalar ``f`` with respect to the tensor symbol ``x``:
    ``Lamda[K](Derivative(f, x[K]))``."""
    f, x = as_expr(f), as_expr(x)
    if not isinstance(x, TensorSymbol):
        raise ProofError(f"grad with respect to {x}, which is not a symbol")
    if not x.shape:
        return Derivative(f, x)
    ks = []
    for n in x.shape:
        ks.append(fresh_symbol(n, f, x, *ks, prefer="klmuvw"))
    return Lamda(Derivative(f, x[tuple(ks)]), [(k, n) for k, n in reversed(list(zip(ks, x.shape)))])


def _drop_path(x, mask, keep):
    """Stochastic depth: sample b of the batch is kept (mask_b = 1, rescaled by 1/keep)
    or dropped (mask_b = 0): ``y[b] = x[b] * mask[b] / keep``."""
    if len(mask.shape) != 1 or mask.shape[0] is not x.shape[0]:
        raise ProofError(f"drop_path: the mask must have one entry per sample of {x}")
    b = fresh_symbol(x.shape[0], x, mask, keep, prefer="bpq")
    return Lamda(x[b] * mask[b] / keep, [(b, x.shape[0])])


_C_GELU = Fraction(44715, 1000000)

DEFINITIONS: dict = {
    "sigmoid": lambda x: 1 / (1 + exp(-x)),
    "relu": lambda x: x * Bool(x > 0),
    "silu": lambda x: x * sigmoid(x),
    "softplus": lambda x: log(1 + exp(x)),
    "gelu": lambda x: x / 2 * (1 + erf(x / sqrt(2))),
    "gelu_tanh": lambda x: x / 2 * (1 + tanh(sqrt(Number(2) / pi) * (x + _C_GELU * x ** 3))),
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "logsumexp": _logsumexp,
    "mean": _mean,
    "var": _var,
    "layer_norm": _layer_norm,
    "rms_norm": _rms_norm,
    "trace": _trace,
    "drop_path": _drop_path,
}

# How each function of the table acts on a tensor (what pushing an index inside reads).
ELEMENTWISE = {"exp", "log", "tanh", "erf", "sigmoid", "relu", "silu", "softplus", "gelu", "gelu_tanh"}
ROWWISE = {"softmax", "log_softmax", "layer_norm", "rms_norm"}      # on the last axis, row by row
REDUCE_LAST = {"logsumexp", "mean", "var"}                         # the last axis reduced


@dataclass(frozen=True)
class Fn:
    """A function of the language: a kernel primitive (``kernel``) or defined by an
    expression (``definition``)."""
    name: str
    kernel: Optional[str] = None
    definition: Optional[Callable] = None
    nargs: Optional[tuple] = None

    def __call__(self, *args):
        return Call(self, *args)


class Call(IntMixin, Expr):
    """``f(args)`` for a function of the table (or a user ``Function``)."""
    rank = 4
    is_int = False

    def __init__(self, fn: Fn, *args):
        args = [a if a is None else as_expr(a) for a in args]
        while args and args[-1] is None:
            args.pop()
        if any(a is None for a in args):
            raise ProofError(f"{fn.name}: an optional argument is missing before a given one")
        super().__init__(*args)
        self.fn = fn
        if fn.kernel is not None:
            self._shape = args[0].shape
        elif fn.name in REDUCE_LAST:
            self._shape = args[0].shape[:-1]
        elif fn.name == "trace":
            self._shape = ()
        else:
            body = self.expand()
            self._shape, self.is_int = body.shape, body.is_int

    def _int_cases(self):
        return self.expand().cases

    def _data(self):
        return (self.fn.name, id(self.fn) if self.fn.name not in DEFINITIONS and self.fn.kernel is None else 0)

    def rebuild(self, args):
        return Call(self.fn, *args)

    @property
    def arg(self):
        return self.args[0]

    def expand(self) -> Expr:
        """The function's definition applied to the arguments (the ``definition`` tactic)."""
        if self.fn.definition is None:
            raise ProofError(f"{self.fn.name} is a primitive; it has no definition to unfold")
        return as_expr(self.fn.definition(*self.args))

    def _compile(self):
        if self.is_int:
            return int_term(self.cases)
        if self.fn.kernel is not None:
            x = self.arg.term
            name = self.fn.kernel
            if not x.shape:
                return T.Func(name, (x,))
            return lam(x.shape, lambda *I: T.Func(name, (at(x, *I),)), x)
        return self.expand().term

    def _text(self):
        return f"{self.fn.name}({', '.join(str(a) for a in self.args)})", 100


def _prim(name):
    fn = Fn(name, kernel=name)
    return fn


exp, log, tanh, erf = (_prim(n) for n in ("exp", "log", "tanh", "erf"))

sigmoid, relu, silu, softplus, gelu, gelu_tanh = (Fn(n, definition=DEFINITIONS[n]) for n in (
    "sigmoid", "relu", "silu", "softplus", "gelu", "gelu_tanh"))
softmax, log_softmax, logsumexp = (Fn(n, definition=DEFINITIONS[n]) for n in ("softmax", "log_softmax", "logsumexp"))
mean, var, layer_norm, rms_norm, trace, drop_path = (Fn(n, definition=DEFINITIONS[n]) for n in (
    "mean", "var", "layer_norm", "rms_norm", "trace", "drop_path"))


class _FunctionFactory:
    """``Function.clip(nargs=(3,), shape=(), eval=lambda a, lo, hi: Min(Max(a, lo), hi))``:
    a user function defined by ``eval`` (its ``definition``)."""

    def __call__(self, name, eval=None, nargs=None, shape=(), **_):
        if eval is None:
            raise ProofError(f"Function {name} needs eval= (its definition); opaque functions "
                             f"are not supported yet")
        return Fn(name, definition=eval, nargs=nargs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda **kw: self(name, **kw)


Function = _FunctionFactory()
