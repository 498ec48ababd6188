"""The proof language (untrusted front end): theorem files with ``apply`` and ``prove``
in the style of ``Eq << step``; every step is re-checked by the kernel.

``from verigrad.proof import *`` gives what a theorem file needs: ``Symbol``, ``oo``,
``Range``, ``Interval``, the decorators ``apply`` and ``prove``, statements
(``Equality``, ``Contains``), tensor expressions (``Sum``, ``Lamda``, ``KroneckerDelta``,
``BlockMatrix``, ``ZeroMatrix``, ``Identity``, ``Swap``, ``Min``, ``Max``, ``Bool``,
``Piecewise``, ``Derivative``, ``vjp``) and functions (``exp``, ``log``, ``sqrt``,
``softmax``, ``layer_norm`` ...). A proof writes facts to its log ``Eq``; a tactic such as
``Eq[-1].this.rhs.distribute()`` only proposes the new expression, and the step is
accepted when the kernel proves old = new.

The package is built in layers; a module imports only from its own layer's modules
below it and from lower layers (``tests/test_import_graph.py`` checks it):

1. ``errors``        ``ProofError``
2. ``expressions/``  the expression tree and the kernel terms it compiles to (its
                     ``__init__`` lists its modules, bottom to top)
3. ``statements``    ``Equality``, ``Contains`` and the kernel equation each means
4. ``tactics``       rewriting proposals on expressions (a table from name to rule)
5. facts and the proof log:
   ``justification`` the few ways proposals become kernel theorems (``StepRejected``);
   ``cursor``        positions inside a fact (``.this.rhs.args[1]``), applying tactics;
   ``facts``         facts, their kernel theorems and derivations (and ``X.this``);
   ``proof_log``     the log ``Eq``; ``closing`` connecting goals to proved facts
6. the script runner:
   ``context``       the proof being run; ``complex_symbols`` proofs over C;
   ``script``        running a theorem file's proof, a theorem's status;
   ``citation``      citing a proved theorem (instantiating its kernel theorem);
   ``theorem``       the decorators ``@apply`` and ``@prove``
7. ``library``       the theorem library: discovery, records, cache, parallel checking
8. ``command``       ``verigrad verify``

Where a lower layer offers syntax that only a higher one can build (``a + b`` is an
``Add``, ``X.this`` a cursor on a fact), it says so in a table that the higher layer
fills (``expressions.node.SYNTAX``); a tactic uses the facts and theorems a proof hands
it through their methods (``fact.statement``, ``theorem.rewrite_at``).

The library API (for ``verigrad verify`` and the HTML proof browser):
``load_library()`` lists the theorems; ``verify_theorem(name_or_path)`` checks one and
returns a ``TheoremRecord``; ``verify_library(...)`` checks many, in parallel, cached.
"""
from .errors import ProofError
from .expressions import (Add, BlockMatrix, Bool, Derivative, Function, Identity, Indexed, Interval,
                          KroneckerDelta, Lamda, MatMul, Max, Min, Mul, OneMatrix, Piecewise, Pow, Range, ReduceMax,
                          Sum, Swap, Symbol, Transpose, ZeroMatrix, drop_path, erf, exp, gelu, gelu_tanh, grad,
                          layer_norm, log, log_softmax, logsumexp, mean, oo, pi, relu, rms_norm, sigmoid, silu,
                          softmax, softplus, sqrt, tanh, trace, var, vmax)
from .expressions import Vjp as vjp
from .justification import StepRejected
from .library import StepRecord, TheoremInfo, TheoremRecord, load_library, verify_library, verify_theorem
from .statements import Contains, Equality
from .theorem import apply, prove

Plus = Add
Eq = Equality

__all__ = ["Add", "apply", "BlockMatrix", "Bool", "Contains", "Derivative", "drop_path", "Equality", "erf", "exp",
           "Function", "gelu", "gelu_tanh", "grad", "Identity", "Indexed", "Interval", "KroneckerDelta",
           "Lamda", "layer_norm", "log", "log_softmax", "logsumexp", "MatMul", "Max", "mean", "Min", "Mul",
           "OneMatrix", "oo", "pi", "Piecewise", "Plus", "Pow", "ProofError", "prove", "Range", "ReduceMax",
           "relu", "rms_norm", "sigmoid", "silu", "softmax", "softplus", "sqrt", "StepRejected", "Sum",
           "Swap", "Symbol", "tanh", "trace", "Transpose", "var", "vjp", "vmax", "ZeroMatrix"]
