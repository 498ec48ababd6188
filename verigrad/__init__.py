"""verigrad: verified deep learning in Python.

State facts about tensors and prove them with a small trusted kernel
(``verigrad.kernel``); certify that a backward pass is exactly the transpose-Jacobian
of its forward for every tensor size; compose certified layers into networks; train on
exactly the certified graph.
"""
__version__ = "0.1.0"

from .report import display as _display  # noqa: E402,F401  (attaches the term printers to the kernel)
from .certify import canon as _canon  # noqa: E402

_canon.install()  # the untrusted search for canonical binder orders

import os as _os  # noqa: E402

if _os.environ.get("VERIGRAD_WITNESS", "").strip() .lower() not in ("", "0", "false", "no", "off"):
    # check every theorem the kernel makes numerically (verigrad.certify.witness)
    from .certify import witness as _witness
    _witness.install()


def certify(fn, shapes, **kw):
    """Certify a ``jax.custom_vjp`` function for all sizes (see ``verigrad.certify.api``)."""
    from .certify.api import certify as _certify
    return _certify(fn, shapes, **kw)


def certify_vjp(forward, backward, shapes, **kw):
    """Certify ``backward(*primals, dy)`` against ``forward`` (see ``verigrad.certify.api``)."""
    from .certify.api import certify_vjp as _certify_vjp
    return _certify_vjp(forward, backward, shapes, **kw)
