"""The red team's cases of a side condition's own indices (RT-22, RT-23): prove a
theorem under a condition, take a step from it that may be false on purpose, and judge
the result at one point."""
import numpy as np

from verigrad.kernel import KernelError, Lamda, Theorem, prove_equal


def proved(lhs, rhs):
    """``lhs = rhs`` proved by the kernel (a theorem, else the test fails)."""
    th = prove_equal(lhs, rhs)
    assert isinstance(th, Theorem), th
    return th


def stepped(step, th):
    """``step(th)`` with the witness check paused (the result may be false on purpose: the
    caller's assertion reports it), or None where the kernel refuses the step."""
    from verigrad.certify.witness import paused
    try:
        with paused():
            return step(th)
    except KernelError:
        return None


def _value(t, sizes, values):
    from verigrad.certify.evaluate import evaluate
    idx = sorted(t.free_idx, key=lambda v: v.name)
    return np.asarray(evaluate(Lamda(idx, t) if idx else t, sizes, values), dtype=np.float64)


def false_at(th, sizes, values) -> bool:
    """Every condition holds at the point (each for every value of its indices) and the
    sides differ."""
    for c in th.conds:
        v = _value(c.term, sizes, values)
        if not (np.all(v > 0) if c.kind == "positive" else np.all(v != 0)):
            return False
    return not np.allclose(_value(th.lhs, sizes, values), _value(th.rhs, sizes, values))
