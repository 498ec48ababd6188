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


from .errors import CommandLineError, UsageError, VerigradError  # noqa: E402,F401  (the public exceptions' base)


def _shapes(shapes):
    """``shapes`` as the certifier reads them: every shape (a string ``"n,d"``, a tuple of
    sizes or symbols, a ``jax.ShapeDtypeStruct``) an ``ArgSpec``, other values held
    (``verigrad.certify.specs``); a bad shape is a ``SpecError`` naming the argument."""
    from .certify.specs import split_shapes
    specs, statics = split_shapes(shapes)
    return {**statics, **specs}


def certify(fn, shapes, **kw):
    """Certify a ``jax.custom_vjp`` (or ``jax.custom_gradient``) function for every size:
    a ``VjpCertificate`` (a ``Certificate``; ``.status`` is PROVED, REFUTED or UNKNOWN).

    ``shapes`` maps each positional argument to its shape: ``"n, d"`` (with an optional
    dtype, ``"n:int32"``), a tuple such as ``("n", 8)`` or ``(SizeSym("n"), d)``, or a
    ``jax.ShapeDtypeStruct`` (symbolic shapes from ``jax.export.symbolic_shape``); any
    other value holds the argument at it (``nondiff_argnums``). Options:
    ``verigrad.certify.api.certify``. Errors are ``VerigradError``s."""
    from .certify.api import certify as _certify
    return _certify(fn, _shapes(shapes), **kw)


def certify_vjp(forward, backward, shapes, **kw):
    """Certify ``backward(*primals, dy)`` against ``forward`` (see ``verigrad.certify.api``)."""
    from .certify.api import certify_vjp as _certify_vjp
    return _certify_vjp(forward, backward, _shapes(shapes), **kw)


def certified(fn=None, /, **shapes):
    """Mark a ``jax.custom_vjp`` with the shapes to certify it at:

        @verigrad.certified(x="n, d", w="d, m")
        @jax.custom_vjp
        def dense(x, w): ...

    The function is returned unchanged (nothing is certified when it is defined). Under
    pytest (the ``verigrad`` plugin, ``verigrad.pytest_plugin``) every marked function a
    test module defines or imports becomes a test that fails unless it is PROVED; the
    ``verigrad`` fixture's ``assert_proved(fn)`` uses the marked shapes too."""
    def mark(f):
        try:
            f.__verigrad_shapes__ = dict(shapes)
        except (AttributeError, TypeError):
            raise UsageError(f"verigrad.certified: cannot mark {f!r} (not a function object)") from None
        return f
    return mark if fn is None else mark(fn)
