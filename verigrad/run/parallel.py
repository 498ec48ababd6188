"""Data parallelism: the same train-step text over several devices, by XLA's SPMD
partitioner (Shardy).

``compile_data_parallel(text, sharded, devices)`` annotates ``@main`` without touching
its body: a one-axis mesh ``batch`` over the devices (``sdy.mesh``), the arguments
flagged in ``sharded`` (batch, targets, drop masks) split along their first axis,
everything else (parameters, optimizer state, scalars) and every result replicated,
and ``mhlo.num_partitions``. XLA then partitions the module: each device computes its
slice of the batch, and every sum over the batch axis (the loss mean, each
parameter's gradient) becomes a local sum followed by an all-reduce, so the update is
the single-device update up to float rounding.

What we found (jax/jaxlib 0.10.2): PJRT's ``compile_and_load`` accepts hand-written
text with ``sdy.sharding`` attributes when the compile options set
``num_partitions``, ``use_spmd_partitioning`` and ``use_shardy_partitioner``, the
form ``jax.jit(..., in_shardings=...)`` itself lowers to in this version (the older
``mhlo.sharding`` strings belong to GSPMD; we did not take that path);
``execute_sharded`` takes global ``jax.Array``s placed with ``NamedSharding``
and returns per-device shards, which ``jax.make_array_from_single_device_arrays``
reassembles without copying. ``jax.export`` would also work, but builds on private
constructor fields.
"""
from __future__ import annotations

import time

import numpy as np

from verigrad.frontends.stablehlo import StableHLOError, parse, signature
from .backend import Executable

AXIS = "batch"


def annotate(text, sharded, n: int, path: str = "<text>") -> str:
    """The module text with a ``batch`` mesh of ``n`` devices, ``@main``'s flagged
    arguments split along axis 0 and the rest (and all results) replicated."""
    from jaxlib.mlir import ir

    p = parse(text, path)
    sig = signature(p)
    if len(sharded) != len(sig.inputs):
        raise ValueError(f"{len(sharded)} sharding flags for the {len(sig.inputs)} arguments of @main")
    for k, (flag, spec) in enumerate(zip(sharded, sig.inputs)):
        if flag and (not spec.shape or spec.shape[0] % n):
            raise ValueError(f"argument {k} ({spec}): its first axis does not split over {n} devices")
    with p.context:
        main, module = p.main, p.module
        for op in module.body.operations:
            if op.operation.name == "sdy.mesh":
                raise StableHLOError(f"{path}: the module already has a device mesh; annotate an unsharded module")

        def spec_attr(rank, split):
            dims = ", ".join(['{"%s"}' % AXIS if (split and d == 0) else "{}" for d in range(rank)])
            return ir.Attribute.parse(f"#sdy.sharding<@mesh, [{dims}]>")

        def attrs(key, specs, flags):
            old = list(ir.ArrayAttr(main.attributes[key])) if key in main.attributes else [None] * len(specs)
            out = []
            for a, spec, flag in zip(old, specs, flags):
                d = {n_.name: n_.attr for n_ in ir.DictAttr(a)} if a is not None else {}
                d["sdy.sharding"] = spec_attr(len(spec.shape), flag)
                out.append(ir.DictAttr.get(d))
            return ir.ArrayAttr.get(out)

        main.attributes["arg_attrs"] = attrs("arg_attrs", sig.inputs, sharded)
        main.attributes["res_attrs"] = attrs("res_attrs", sig.outputs, [False] * len(sig.outputs))
        mesh = ir.Operation.parse(f'sdy.mesh @mesh = <["{AXIS}"={n}]>')
        ir.InsertionPoint.at_block_begin(module.body).insert(mesh)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), n)
        if not module.operation.verify():
            raise StableHLOError(f"{path}: the annotated module does not verify")
        return str(module)


class DataParallelExecutable(Executable):
    """``@main`` partitioned over ``devices``; called like an ``Executable`` with global
    arrays, returning replicated global ``jax.Array``s.

    Several processes (``jax.distributed``): ``devices`` is the global mesh, each
    process compiles the same module for it and loads it on its own devices, and every
    process calls with the same global values; each feeds only the rows of its own
    devices (``jax.make_array_from_callback``) and gets the replicated results on its
    own devices."""

    backend = "xla"

    def __init__(self, text, sharded, devices=None, names=None, path: str = "<text>"):
        import jax
        from jax.extend import backend as jb
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        devices = list(devices or jax.devices())
        n = len(devices)
        local = [d for d in devices if d.process_index == jax.process_index()]
        sig = signature(text, path)
        t0 = time.perf_counter()
        annotated = annotate(text, sharded, n, path)
        options = jb.get_compile_options(num_replicas=1, num_partitions=n,
                                         device_assignment=np.array(devices, dtype=object).reshape(1, n))
        options.executable_build_options.use_spmd_partitioning = True
        options.executable_build_options.use_shardy_partitioner = True
        try:
            self.exe = jb.get_backend(devices[0].platform).compile_and_load(annotated, local, options)
        except Exception as e:
            raise StableHLOError(f"XLA could not partition the module: {str(e).strip().splitlines()[0]}") from None
        self.mesh = Mesh(np.array(devices), (AXIS,))
        self.in_shardings = [NamedSharding(self.mesh, PartitionSpec(AXIS) if f else PartitionSpec()) for f in sharded]
        self.out_sharding = NamedSharding(self.mesh, PartitionSpec())
        self.devices, self._jax = devices, jax
        super().__init__(sig, names, time.perf_counter() - t0)

    def _put(self, value, k):
        sh = self.in_shardings[k]
        if isinstance(value, self._jax.Array):
            if value.sharding == sh:
                return value
            if not value.is_fully_addressable:      # another layout of a global value: this process's copy
                value = value.addressable_data(0)
        host = np.asarray(value)
        return self._jax.make_array_from_callback(host.shape, sh, lambda index: host[index])

    def _run(self, args):
        res = self.exe.execute_sharded([self._put(a, k) for k, a in enumerate(args)])
        shards = res.disassemble_into_single_device_arrays()
        return [self._jax.make_array_from_single_device_arrays(spec.shape, self.out_sharding, parts)
                for spec, parts in zip(self.signature.outputs, shards)]


def compile_data_parallel(text, sharded, devices=None, names=None, path: str = "<text>") -> DataParallelExecutable:
    """Compile ``text`` split over ``devices`` (default: all) along the batch axis of
    the arguments flagged in ``sharded``."""
    return DataParallelExecutable(text, list(sharded), devices, names, path)


__all__ = ["annotate", "compile_data_parallel", "DataParallelExecutable", "AXIS"]
