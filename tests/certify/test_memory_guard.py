"""The memory limit of certify (``--max-memory``): a claim whose proof grows the process
past the limit is UNKNOWN, saying so, instead of the system killing the process; below
the limit nothing changes."""
import signal
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

import verigrad
from verigrad.certify.clock import MemoryLimit, memory_guard, resident_bytes
from verigrad.certify.obligations import BadInput

MiB = 2**20


@jax.custom_vjp
def square(x):
    return x * x


square.defvjp(lambda x: (x * x, x), lambda x, dy: (2 * x * dy,))


def _grow(step_bytes: int, steps: int) -> list:
    """Hold ``steps`` blocks of ``step_bytes`` each, one at a time, in Python (where a
    signal handler can run between allocations, as in the kernel)."""
    held = []
    for _ in range(steps):
        held.append(bytearray(step_bytes))
        sum(range(20_000))          # a little pure-Python work, as a decision does
    return held


def test_a_block_past_its_limit_raises_memory_limit():
    limit = resident_bytes() + 64 * MiB
    with pytest.raises(MemoryLimit, match="memory limit of"):
        with memory_guard(limit):
            _grow(8 * MiB, 200)             # 1.6 GiB if nothing stopped it
    assert resident_bytes() < limit + 512 * MiB


def test_a_block_within_its_limit_runs_and_leaves_no_handler_or_timer_behind():
    before = signal.getsignal(signal.SIGALRM)
    with memory_guard(resident_bytes() + 512 * MiB):
        held = _grow(MiB, 16)
    assert len(held) == 16
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_limit_passed_in_one_block_is_not_raised_in_the_next():
    with pytest.raises(MemoryLimit):
        with memory_guard(resident_bytes() + 32 * MiB):
            _grow(8 * MiB, 100)
    with memory_guard(resident_bytes() + 256 * MiB):
        assert len(_grow(MiB, 4)) == 4


def test_certify_reports_a_claim_past_the_limit_as_unknown():
    limit_gib = resident_bytes() / 2**30 / 2           # passed already: every claim stops
    cert = verigrad.certify(square, shapes={"x": "n"}, max_memory=limit_gib)
    assert cert.status == "UNKNOWN"
    assert "memory limit" in cert.wrt["x"].detail and "--max-memory" in cert.wrt["x"].detail


def test_certify_within_the_default_limit_proves():
    assert verigrad.certify(square, shapes={"x": "n"}).status == "PROVED"


@pytest.mark.parametrize("value", [0, -1.5])
def test_a_limit_that_is_not_positive_is_refused(value):
    with pytest.raises(BadInput, match="max_memory must be a positive"):
        verigrad.certify(square, shapes={"x": "n"}, max_memory=value)


def test_the_command_line_refuses_a_limit_that_is_not_positive(tmp_path):
    src = tmp_path / "sq.py"
    src.write_text("import jax\n\n@jax.custom_vjp\ndef sq(x):\n    return x * x\n\n"
                   "sq.defvjp(lambda x: (x * x, x), lambda x, dy: (2 * x * dy,))\n")
    out = subprocess.run([sys.executable, "-m", "verigrad.cli", "certify", f"{src}:sq", "--shape", "x=n",
                          "--max-memory", "0"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "--max-memory must be positive" in out.stderr and "Traceback" not in out.stderr
