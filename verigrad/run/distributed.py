r"""Where a run executes: the device kind, the local devices, and other processes.

``setup(...)`` must run before jax starts its backends (the first ``jax.devices()``,
compile or array), because three things can only be set then:

- ``--device cpu|gpu``: ``cpu`` hides any GPU (``jax_platforms``); ``gpu`` needs a
  jaxlib with CUDA (``pip install -e '.[cuda]'``) and fails with one line without one;
- ``--devices N`` on the CPU: XLA's CPU client shows one device unless told otherwise,
  so ``setup`` sets ``jax_num_cpu_devices`` (the same as
  ``XLA_FLAGS=--xla_force_host_platform_device_count=N``) itself;
- ``--num-processes P --process-id I --coordinator HOST:PORT``: the processes meet
  through ``jax.distributed.initialize``; on the CPU their collectives (the gradient
  all-reduce) run over gloo (``jax_cpu_collectives_implementation``).

The data-parallel mesh is the first ``N`` local devices of every process, in process
order: a global batch of ``B`` rows is split into ``P * N`` equal slices along axis 0
(``verigrad.run.parallel``). Every process draws the same global batch from the same
seeded generator and feeds only its own rows, so one process with two devices and two
processes with one each run the same partitioned program on the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from verigrad.errors import CommandLineError, VerigradError

KINDS = ("cpu", "gpu")


class PlacementError(VerigradError, ValueError):
    """A device or process setting that cannot be met; one line."""


class PlacementArgumentError(PlacementError, CommandLineError):
    """Options that do not go together (the command line's exit code 2)."""


@dataclass
class Placement:
    kind: str                  # "cpu" or "gpu"
    devices: list              # the data-parallel mesh (global, every process's devices)
    local: list                # this process's devices in it
    process_index: int = 0
    process_count: int = 1

    @property
    def parallel(self) -> bool:
        return len(self.devices) > 1

    @property
    def primary(self) -> bool:
        """The process that writes checkpoints and parameter files."""
        return self.process_index == 0

    def describe(self) -> str:
        where = f"{len(self.devices)} {self.kind} device{'s' if len(self.devices) > 1 else ''}"
        if self.process_count > 1:
            where += f" over {self.process_count} processes"
        return where


def _initialized() -> bool:
    try:
        from jax._src import xla_bridge
        return bool(xla_bridge.backends_are_initialized())
    except Exception:  # noqa: BLE001 - a private helper; assume started when it is gone
        return True


def setup(device: str | None = None, devices: int = 1, coordinator: str | None = None, num_processes: int = 1,
          process_id: int | None = None, timeout: int = 120) -> Placement:
    """Configure jax for this run and return where it runs (see the module's doc)."""
    import jax

    if device is not None and device not in KINDS:
        raise PlacementArgumentError(f"unknown device {device!r} (known: {', '.join(KINDS)})")
    if not isinstance(devices, int) or devices < 1:
        raise PlacementArgumentError(f"--devices must be >= 1, got {devices}")
    if num_processes < 1:
        raise PlacementArgumentError(f"--num-processes must be >= 1, got {num_processes}")
    multi = num_processes > 1
    if multi:
        if coordinator is None or process_id is None:
            raise PlacementArgumentError("--num-processes > 1 needs --coordinator HOST:PORT and --process-id I "
                                         "(0 .. P-1)")
        if not 0 <= process_id < num_processes:
            raise PlacementArgumentError(f"--process-id must be in 0 .. {num_processes - 1}, got {process_id}")
        host, _, port = coordinator.rpartition(":")
        if not host or not port.isdigit():
            raise PlacementArgumentError(f"--coordinator should be HOST:PORT, got {coordinator!r}")
    elif process_id not in (None, 0) or coordinator is not None:
        raise PlacementArgumentError("--process-id and --coordinator go with --num-processes N (N > 1)")
    started = _initialized()
    if not started:
        if device == "cpu":
            jax.config.update("jax_platforms", "cpu")
        if devices > 1 and device != "gpu":
            jax.config.update("jax_num_cpu_devices", devices)
        if multi and device != "gpu":
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
    elif multi:
        raise PlacementError("jax had started before the processes could meet: call setup() (or "
                             "jax.distributed.initialize) before any jax computation")
    if multi:
        try:
            jax.distributed.initialize(coordinator, num_processes, process_id, initialization_timeout=timeout)
        except Exception as e:  # noqa: BLE001 - connection refused, timeout, a second initialize
            raise PlacementError(f"process {process_id} of {num_processes} could not join {coordinator}: "
                                 f"{_line(e)}") from None
    kind = device or _default_kind(jax)
    try:
        local = jax.local_devices(backend=kind)
    except RuntimeError as e:
        if kind == "gpu":
            raise PlacementError(f"--device gpu: jax finds no GPU (jaxlib {_jaxlib()} sees {_platforms(jax)}); "
                                 "install a CUDA jaxlib: pip install -e '.[cuda]'") from None
        raise PlacementError(f"--device {kind}: {_line(e)}") from None
    if len(local) < devices:
        hint = ("; on the CPU the count is set before jax starts (verigrad train does it; from Python call "
                "verigrad.run.distributed.setup first, or set XLA_FLAGS=--xla_force_host_platform_device_count=N)"
                if kind == "cpu" else "")
        raise PlacementError(f"--devices {devices}: this process has {len(local)} {kind} device(s){hint}")
    mine = sorted(local, key=lambda d: d.id)[:devices]
    if multi:
        everyone = sorted(jax.devices(kind), key=lambda d: (d.process_index, d.id))
        mesh = []
        for p in range(jax.process_count()):
            mesh += [d for d in everyone if d.process_index == p][:devices]
    else:
        mesh = mine
    return Placement(kind, mesh, mine, jax.process_index(), jax.process_count())


def current(devices: int = 1) -> Placement:
    """The placement of a process that is already set up (or never was: the default)."""
    return setup(None, devices) if not _initialized() else _existing(devices)


def _existing(devices: int) -> Placement:
    import jax
    kind = _default_kind(jax)
    local = sorted(jax.local_devices(backend=kind), key=lambda d: d.id)
    if len(local) < devices:
        raise PlacementError(f"{devices} devices requested, {len(local)} available (on the CPU set "
                             "XLA_FLAGS=--xla_force_host_platform_device_count=N, or call "
                             "verigrad.run.distributed.setup, before jax starts)")
    mine = local[:devices]
    if jax.process_count() > 1:
        everyone = sorted(jax.devices(kind), key=lambda d: (d.process_index, d.id))
        mesh = [d for p in range(jax.process_count()) for d in [e for e in everyone if e.process_index == p][:devices]]
    else:
        mesh = mine
    return Placement(kind, mesh, mine, jax.process_index(), jax.process_count())


def _default_kind(jax) -> str:
    b = jax.default_backend()
    return "gpu" if b in ("gpu", "cuda", "rocm") else b


def _platforms(jax) -> str:
    try:
        return ", ".join(sorted({d.platform for d in jax.devices()}))
    except Exception:  # noqa: BLE001
        return "no devices"


def _jaxlib() -> str:
    try:
        import jaxlib
        return jaxlib.__version__
    except Exception:  # noqa: BLE001
        return "?"


def _line(e) -> str:
    return " ".join(str(e).split())[:300] or type(e).__name__


__all__ = ["Placement", "PlacementError", "setup", "current", "KINDS"]
