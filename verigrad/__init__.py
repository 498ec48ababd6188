"""verigrad: verified deep learning in Python.

State facts about tensors and prove them with a small trusted kernel
(``verigrad.kernel``); certify that a backward pass is exactly the transpose-Jacobian
of its forward for every tensor size; compose certified layers into networks; train on
exactly the certified graph.
"""
__version__ = "0.1.0"

from .report import printing as _printing  # noqa: E402,F401  (installs the term printer)
from .certify import canon as _canon  # noqa: E402

_canon.install()  # the untrusted search for canonical binder orders
