"""The proof language (untrusted front end): theorem files with ``apply`` and ``prove``
in the style of ``Eq << step``; every step is re-checked by the kernel.

``from verigrad.proof import *`` gives what a theorem file needs: ``Symbol``, ``oo``,
``Range``, ``Interval``, the decorators ``apply`` and ``prove``, statements
(``Equality``, ``Contains``), tensor expressions (``Sum``, ``Lamda``, ``KroneckerDelta``,
``BlockMatrix``, ``ZeroMatrix``, ``Identity``, ``Swap``, ``Min``, ``Max``, ``Bool``,
``Piecewise``, ``Derivative``, ``vjp``) and functions (``exp``, ``log``, ``sqrt``,
``softmax``, ``layer_norm`` ...). A proof writes facts to its log ``Eq``; a tactic such as
``Eq[-1].this.rhs.distribute()`` only proposes the new expression, and the step is
accepted when the kernel proves old = new. Modules:

- ``expr``        the expression tree and what each node compiles to (kernel terms)
- ``indicators``  ``Bool``, ``KroneckerDelta``, ``Piecewise``, ``Min``/``Max`` (cases)
- ``matrices``    ``Identity``, ``Swap``, ``BlockMatrix``
- ``calculus``    ``Derivative``, ``vjp``
- ``statements``  ``Equality``, ``Contains`` and the kernel equation each means
- ``functions``   the table of named functions (softmax, layer_norm, gelu, ...)
- ``symbols``     ``Symbol``: sizes, indices, tensors, definitions
- ``tactics``     rewriting proposals (a table from name to rule)
- ``cursor``      positions inside a fact (``.this.rhs.args[1]``) and applying tactics
- ``facts``       facts, their kernel theorems and derivations; the log ``Eq``
- ``kernel_glue`` the few ways proposals become kernel theorems
- ``script``      ``@apply``/``@prove``, running a proof, a theorem's status
- ``citation``    citing a proved theorem (instantiating its kernel theorem)
- ``closing``     connecting goals to the facts a proof established
- ``library``     the theorem library: discovery, records, cache, parallel checking
- ``command``     ``verigrad verify``

The library API (for ``verigrad verify`` and the HTML proof browser):
``load_library()`` lists the theorems; ``verify_theorem(name_or_path)`` checks one and
returns a ``TheoremRecord``; ``verify_library(...)`` checks many, in parallel, cached.
"""
from .expr import (Add, Indexed, Lamda, MatMul, Mul, OneMatrix, Pow, ProofError, ReduceMax, Sum, Transpose,
                   ZeroMatrix, oo, pi, sqrt)
from .calculus import Derivative, Vjp as vjp
from .indicators import Bool, KroneckerDelta, Max, Min, Piecewise
from .matrices import BlockMatrix, Identity, Swap
from .statements import Contains, Equality, Interval, Range
from .functions import (Function, drop_path, erf, exp, gelu, gelu_tanh, grad, layer_norm, log, log_softmax,
                        logsumexp, mean, relu, rms_norm, sigmoid, silu, softmax, softplus, tanh, trace, var, vmax)
from .symbols import Symbol
from .script import apply, prove
from .kernel_glue import StepRejected
from . import library as _library

Plus = Add
Eq = Equality

__all__ = ["Add", "apply", "BlockMatrix", "Bool", "Contains", "Derivative", "drop_path", "Equality", "erf", "exp",
           "Function", "gelu", "gelu_tanh", "grad", "Identity", "Indexed", "Interval", "KroneckerDelta",
           "Lamda", "layer_norm", "log", "log_softmax", "logsumexp", "MatMul", "Max", "mean", "Min", "Mul",
           "OneMatrix", "oo", "pi", "Piecewise", "Plus", "Pow", "ProofError", "prove", "Range", "ReduceMax",
           "relu", "rms_norm", "sigmoid", "silu", "softmax", "softplus", "sqrt", "StepRejected", "Sum",
           "Swap", "Symbol", "tanh", "trace", "Transpose", "var", "vjp", "vmax", "ZeroMatrix"]

# The library API (not part of ``import *``: theorem files do not need it).
load_library, verify_theorem, verify_library = _library.load_library, _library.verify_theorem, _library.verify_library
TheoremRecord, StepRecord, TheoremInfo = _library.TheoremRecord, _library.StepRecord, _library.TheoremInfo
