"""The expression layer of the proof language: tensor expressions and the kernel terms
they compile to.

The layers above (statements, tactics, facts, the script runner) import from this
package only; its modules import only downward, in this order:

- ``kernel_terms``  building kernel terms: fresh indices, comprehensions, sums, entries
- ``node``          ``Expr``: structure, compilation, display; syntax forwarded to ``SYNTAX``
- ``integers``      integer expressions by cases (``IntMixin``)
- ``atoms``         ``Number``, ``pi``, ``SizeExpr``, ``Raw``; ``as_expr``
- ``domains``       ``oo``, ``Interval``, ``Range``
- ``symbols``       ``IntSymbol``, ``TensorSymbol``, ``Symbol``; ``as_size``, ``fresh_symbol``
- ``constant_tensors`` ``ZeroMatrix``, ``OneMatrix``, ``zeros``
- ``arithmetic``    ``Add``, ``Mul``, ``Pow``, ``sqrt``, ``FloorDiv``
- ``matmul``        ``MatMul``, ``Transpose``
- ``indexing``      ``Indexed``, ``Slice``
- ``binders``       ``Lamda``, ``Sum``, ``ReduceMax``
- ``indicators``    ``Bool``, ``KroneckerDelta``, ``Piecewise``, ``Min``, ``Max`` (``Relational``)
- ``matrices``      ``Identity``, ``Swap``, ``BlockMatrix``
- ``calculus``      ``Derivative``, ``Vjp``
- ``functions``     the table of named functions (``softmax``, ``layer_norm`` ...), ``Function``
- ``entries``       ``push_index`` (an index pushed inside), ``tidy_lamda``
- ``syntax``        what Python's operators build (fills ``node.SYNTAX``)

Conventions (SymPy's where it has one): ``Lamda[j:n, i:m](f)`` and ``Sum[j:n, i:m](f)``
list limits innermost first; an integer symbol with ``domain=[a, b]`` ranges over the
closed interval, with ``domain=Range(a, b)`` over ``[a, b)``, an index starts at 0 and a
size is at least 1; ``+`` and ``*`` broadcast as NumPy does; ``Min``/``Max`` of integers
pick their first argument on ties and compile to cases weighted by indicators; a scalar
block of a ``BlockMatrix`` sits at one position (a Kronecker delta), a tensor block is
read with total indexing (zero outside it).
"""
from . import syntax as _syntax  # noqa: F401  (fills node.SYNTAX: what the operators build)
from .arithmetic import Add, FloorDiv, Mul, Pow, sqrt
from .atoms import Constant, Number, Raw, SizeExpr, as_expr, pi
from .binders import Binder, Lamda, ReduceMax, Sum
from .calculus import Derivative, Vjp
from .constant_tensors import OneMatrix, ZeroMatrix, zeros
from .domains import Infinity, Interval, OpenRange, Range, oo
from .entries import push_index, tidy_lamda
from .functions import (Call, Fn, Function, drop_path, erf, exp, gelu, gelu_tanh, grad, layer_norm, log,
                        log_softmax, logsumexp, mean, relu, rms_norm, sigmoid, silu, softmax, softplus, tanh,
                        trace, var, vmax)
from .indexing import Indexed, Slice
from .indicators import Bool, KroneckerDelta, Max, Min, Piecewise, Relational
from .integers import IntMixin
from .kernel_terms import SPARE_NAMES, index_names, shape_str, weight_product
from .matmul import MatMul, Transpose
from .matrices import BlockMatrix, Identity, Swap
from .node import SYNTAX, Expr
from .symbols import IntSymbol, Symbol, TensorSymbol, as_size, fresh_symbol, make_symbol

__all__ = ["Add", "as_expr", "as_size", "Binder", "BlockMatrix", "Bool", "Call", "Constant", "Derivative",
           "drop_path", "erf", "exp", "Expr", "FloorDiv", "Fn", "fresh_symbol", "Function", "gelu", "gelu_tanh",
           "grad", "Identity", "index_names", "Indexed", "Infinity", "Interval", "IntMixin", "IntSymbol",
           "KroneckerDelta", "Lamda", "layer_norm", "log", "log_softmax", "logsumexp", "make_symbol", "MatMul",
           "Max", "mean", "Min", "Mul", "Number", "OneMatrix", "oo", "OpenRange", "pi", "Piecewise", "Pow",
           "push_index", "Range", "Raw", "ReduceMax", "Relational", "relu", "rms_norm", "shape_str", "sigmoid",
           "silu", "SizeExpr", "Slice", "softmax", "softplus", "SPARE_NAMES", "sqrt", "Sum", "Swap", "Symbol",
           "SYNTAX", "tanh", "TensorSymbol", "tidy_lamda", "trace", "Transpose", "var", "Vjp", "vmax",
           "weight_product", "ZeroMatrix", "zeros"]
