"""Compile StableHLO text and call it (untrusted, but checked at every call).

``compile(text, backend="xla")`` gives an ``Executable``: called with one array per
argument of ``@main``, it returns one device array per result, which can be passed
straight back in (parameters stay on the device between steps).

Every call checks each argument's shape and dtype against ``@main``'s signature
first: PJRT compares only byte sizes, so a float32[10, 64] in a float32[64, 10] slot
(or an int32 in a float32 slot) would run and give wrong numbers. A mismatch is an
``ArgumentError`` naming the argument.

Backends:
- ``xla``: XLA through PJRT, jax's CPU (or GPU) client: the text embedded unchanged
  in a ``jax.jit`` module for its fast dispatch (``JitExecutable``);
  ``XlaExecutable`` calls PJRT's ``compile_and_load`` / ``execute`` directly;
- ``iree``: IREE's ``llvm-cpu`` target (optional: ``pip install 'verigrad[iree]'``).
"""
from __future__ import annotations

import hashlib
import time
from operator import attrgetter

import numpy as np

from verigrad.frontends.stablehlo import Signature, StableHLOError, TensorSpec, dtype_name, parse, signature
from verigrad.errors import VerigradError

BACKENDS = ("xla", "iree")
_SHAPE, _DTYPE = attrgetter("shape"), attrgetter("dtype")


class ArgumentError(VerigradError, ValueError):
    """An argument whose shape or dtype differs from ``@main``'s signature."""


class BackendUnavailable(VerigradError, RuntimeError):
    """The requested backend is not installed."""


def check_arguments(sig: Signature, args, names=None):
    """Raise ``ArgumentError`` unless ``args`` match ``sig.inputs`` one for one."""
    if len(args) != len(sig.inputs):
        raise ArgumentError(f"@main takes {len(sig.inputs)} arguments, got {len(args)}")
    for k, (a, spec) in enumerate(zip(args, sig.inputs)):
        shape = tuple(int(d) for d in getattr(a, "shape", ()))
        dtype = getattr(a, "dtype", None)
        if shape != spec.shape or dtype is None or np.dtype(dtype) != spec.np_dtype:
            label = names[k] if names else spec.name
            got = f"shape {shape} {np.dtype(dtype).name if dtype is not None else type(a).__name__}"
            raise ArgumentError(f"argument {k} ({label}): expected {spec}, got {got}")


def _host(a, spec: TensorSpec):
    """Python scalars become arrays of the slot's dtype; arrays are left alone so the
    check sees their real dtype."""
    if isinstance(a, (bool, int, float)) and spec.shape == ():
        return np.asarray(a, dtype=spec.np_dtype)
    return a


class Executable:
    """A compiled ``@main``. ``exe(*args)`` checks the arguments, then runs."""

    backend = "?"

    def __init__(self, sig: Signature, names=None, compile_seconds: float = 0.0):
        self.signature = sig
        self.names = list(names) if names is not None else [s.name for s in sig.inputs]
        self.compile_seconds = compile_seconds
        self._expect = [(s.shape, s.np_dtype) for s in sig.inputs]
        self._shapes = tuple(s.shape for s in sig.inputs)
        self._dtypes = tuple(s.np_dtype for s in sig.inputs)

    def __call__(self, *args):
        if not self._matches(args):      # the slow path converts scalars, then names the culprit
            args = [_host(a, s) for a, s in zip(args, self.signature.inputs)]
            check_arguments(self.signature, args, self.names)
        return self._run(args)

    def _matches(self, args) -> bool:
        """The common case (arrays of the right shapes and dtypes), checked in two
        C-level passes over the arguments: a step of a small network takes about 80 us,
        and a Python loop over its arguments cost a tenth of that."""
        try:
            return tuple(map(_SHAPE, args)) == self._shapes and tuple(map(_DTYPE, args)) == self._dtypes
        except AttributeError:              # a scalar, a list: the slow path converts or names it
            return False

    def put(self, value, k: int):
        """``value`` on the device, as argument ``k`` expects it (checked)."""
        value = _host(value, self.signature.inputs[k])
        check_arguments(Signature((self.signature.inputs[k],), ()), [value], [self.names[k]])
        return self._put(value, k)

    def _run(self, args):
        raise NotImplementedError

    def _put(self, value, k):
        raise NotImplementedError


# -- XLA through PJRT --------------------------------------------------------------------------

class XlaExecutable(Executable):
    backend = "xla"

    def __init__(self, text, sig, names=None, device=None):
        import jax
        from jax.extend import backend as jb

        t0 = time.perf_counter()
        client = jb.get_backend(device.platform) if device is not None else jb.get_backend()   # the device's own
        self.device = device or client.local_devices()[0]
        options = jb.get_compile_options(num_replicas=1, num_partitions=1)
        try:
            self.exe = client.compile_and_load(text, [self.device], options)
        except Exception as e:  # XLA's errors are plain RuntimeErrors with the reason
            raise StableHLOError(f"XLA could not compile the module: {str(e).strip().splitlines()[0]}") from None
        self._jax = jax
        super().__init__(sig, names, time.perf_counter() - t0)

    def _put(self, value, k):
        if isinstance(value, self._jax.Array) and value.devices() == {self.device}:
            return value
        return self._jax.device_put(value, self.device)

    def _run(self, args):
        Array = self._jax.Array
        if not all(isinstance(a, Array) for a in args):
            args = [self._put(a, k) for k, a in enumerate(args)]
        return self.exe.execute(args)


class JitExecutable(Executable):
    """XLA through ``jax.jit``: the text is embedded, unchanged, as a private function
    of a module whose ``@main`` only calls it, and ``jax.jit`` compiles that module
    (PJRT, like ``XlaExecutable``) and dispatches calls through its C++ fast path,
    which ``execute`` lacks (about 100 us per call for a dozen arrays, measured by
    ``benchmarks/train_step.py``). Only public extension points are used: a
    ``jax.extend.core.Primitive`` whose lowering (``jax.interpreters.mlir``) merges
    the parsed text into the module being built and calls its ``@main``."""
    backend = "xla"

    def __init__(self, text, sig, names=None, device=None):
        import jax

        t0 = time.perf_counter()
        self._jax = jax
        self.device = device or jax.local_devices()[0]
        outs = tuple((s.shape, s.np_dtype.name) for s in sig.outputs)

        def step(*args):
            # runs when jax.jit traces, i.e. for every new signature of the arguments
            # (shapes, dtypes, placement) and never for one it has compiled: a call with
            # device arrays of other shapes or dtypes is refused here, naming the argument
            check_arguments(sig, args, self.names)
            return _embedded_p().bind(*args, text=str(text), outs=outs)
        self.fn = jax.jit(step)
        structs = [jax.ShapeDtypeStruct(s.shape, s.np_dtype, sharding=jax.sharding.SingleDeviceSharding(self.device))
                   for s in sig.inputs]
        super().__init__(sig, names)
        try:
            self.fn.lower(*structs).compile()      # compiled now (for the device); calls reuse it
        except Exception as e:  # XLA's and the verifier's errors carry the reason on their first line
            raise StableHLOError(f"XLA could not compile the module: {str(e).strip().splitlines()[0]}") from None
        self.compile_seconds = time.perf_counter() - t0
        array = type(jax.device_put(np.zeros((), np.float32), self.device))
        self._device_types = (array,) * len(sig.inputs)

    _put = XlaExecutable._put       # the same device placement

    def __call__(self, *args):
        # Device arrays only (what a training loop feeds back): jax.jit's own dispatch
        # compares their shapes and dtypes with the compiled signature in C++, and a new
        # signature is traced, where ``step`` checks it; anything else (numpy arrays,
        # whose float64 jax.jit would narrow silently, scalars) is checked first here.
        if tuple(map(type, args)) == self._device_types:
            return list(self.fn(*args))
        return super().__call__(*args)

    def _run(self, args):
        return list(self.fn(*args))


_PRIMITIVE: list = []


def _embedded_p():
    """The primitive ``verigrad_stablehlo(*args, text, outs)``: the ``@main`` of
    ``text`` applied to ``args``, with results of shapes and dtypes ``outs``."""
    if _PRIMITIVE:
        return _PRIMITIVE[0]
    import jax
    from jax.extend.core import Primitive
    from jax.interpreters import mlir
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import func

    p = Primitive("verigrad_stablehlo")
    p.multiple_results = True
    p.def_abstract_eval(lambda *avals, text, outs: [jax.core.ShapedArray(s, np.dtype(d)) for s, d in outs])

    def lowering(ctx, *args, text, outs):
        module = ir.Module.parse(text, context=ctx.module_context.context)
        main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        results = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)
        name = mlir.merge_mlir_modules(ctx.module_context.module, "verigrad_main", module)
        return func.CallOp(results, ir.FlatSymbolRefAttr.get(name), list(args)).results

    mlir.register_lowering(p, lowering)
    _PRIMITIVE.append(p)
    return p


# -- IREE ------------------------------------------------------------------------------------------

def iree_available() -> str | None:
    """None if IREE can be used, else the reason it cannot."""
    try:
        import iree.compiler  # noqa: F401
        import iree.runtime  # noqa: F401
    except ImportError as e:
        return f"IREE is not installed ({e.name}); pip install 'verigrad[iree]'"
    return None


class IreeExecutable(Executable):
    backend = "iree"

    def __init__(self, text, sig, names=None, driver="local-sync"):
        why = iree_available()
        if why:
            raise BackendUnavailable(why)
        import iree.compiler as ic
        import iree.runtime as rt

        t0 = time.perf_counter()
        try:
            vmfb = ic.compile_str(text, input_type="stablehlo", target_backends=["llvm-cpu"],
                                  extra_args=["--iree-llvmcpu-target-cpu=host"])
        except Exception as e:
            lines = [ln for ln in str(e).splitlines() if "error" in ln] or str(e).splitlines()
            raise StableHLOError(f"IREE could not compile the module: {lines[0].strip()}") from None
        self.config = rt.Config(driver)
        ctx = rt.SystemContext(config=self.config)
        vm = rt.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm)
        self.ctx, self.fn, self._rt = ctx, ctx.modules[vm.name]["main"], rt
        super().__init__(sig, names, time.perf_counter() - t0)

    def _put(self, value, k):
        if isinstance(value, self._rt.DeviceArray):
            return value
        return self._rt.asdevicearray(self.config.device, np.asarray(value))

    def _run(self, args):
        out = self.fn(*[self._put(a, k) for k, a in enumerate(args)])
        return list(out) if isinstance(out, (tuple, list)) else [out]


_compiled: dict = {}


def compile(text, backend: str = "xla", names=None, path: str = "<text>", device=None) -> Executable:
    """Parse and verify ``text``, read ``@main``'s signature, compile with ``backend``
    (XLA: for ``device``, default jax's first device).

    Executables hold no state between calls, so one per (text, backend, names,
    device) is kept and reused."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    src = text.decode() if isinstance(text, bytes) else str(text)
    key = (hashlib.sha256(src.encode()).hexdigest(), backend, tuple(names) if names is not None else None)
    if device is not None:
        import jax
        if device != jax.local_devices()[0]:
            key += (str(device),)
    hit = _compiled.get(key)
    if hit is not None:
        return hit
    sig = signature(parse(src, path))
    exe = JitExecutable(src, sig, names, device) if backend == "xla" else IreeExecutable(src, sig, names)
    _compiled[key] = exe
    return exe


def to_host(x) -> np.ndarray:
    """A device array (XLA or IREE) as a numpy array; of a value replicated over
    several processes, this process's copy."""
    if hasattr(x, "to_host"):
        return np.asarray(x.to_host())
    if getattr(x, "is_fully_addressable", True) is False:
        x = x.addressable_data(0)
    return np.asarray(x)


__all__ = ["compile", "Executable", "JitExecutable", "XlaExecutable", "ArgumentError", "BackendUnavailable", "check_arguments", "iree_available",
           "to_host", "BACKENDS", "dtype_name"]
