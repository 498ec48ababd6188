"""Red team RT6-A1, RT6-A2: a size substitution reshapes a variable into another one.

Variables are named and shaped: ``x`` of shape ``(n,)`` and ``x`` of shape ``(2,)`` are two
variables, but at ``n := 2`` the first becomes the second. ``instantiate`` merged them
inside binding places without a check:

- A1: ``d(x_2[0] x_n[0]) / dx_2[0] = x_n[0]`` (true: ``x_n`` is held fixed) became
  ``d(x[0] x[0]) / dx[0] = x[0]``, and with the true ``= 2 x[0]``: ``|- x[0] = 2 x[0]``,
  no hypothesis, no condition, PROVED by ``verigrad check`` too.
- A2: ``At(p_n[0] + p_m[0], p_n := v)`` at ``n, m := 2``: the free ``p_m`` became the
  bound param, so ``at_elim`` gave ``v[0] + v[0]`` while the instance of the
  ``at_elim`` theorem says ``v[0] + p[0]``: ``|- v[0] + v[0] = v[0] + p[0]``.
"""
import pytest

from verigrad.kernel import (At, Deriv, KernelError, SizeSym, Theorem, Var, at_elim, instantiate, prove_equal,
                             refl, symm, trans)

n, m = SizeSym("n"), SizeSym("m")


def test_a1_a_held_variable_does_not_become_the_differentiated_one():
    x2, xn = Var("x", (2,)), Var("x", (n,))
    th = prove_equal(Deriv(x2[0] * xn[0], x2, (0,)), xn[0])
    assert isinstance(th, Theorem)
    with pytest.raises(KernelError):
        inst = instantiate(th, {n: 2})
        trans(symm(inst), prove_equal(inst.lhs, 2 * x2[0]))      # |- x[0] = 2 x[0]


def test_a1_both_reshaped_into_the_differentiated_one():
    xn, xm = Var("x", (n,)), Var("x", (m,))
    th = prove_equal(Deriv(xn[0] * xm[0], xn, (0,)), xm[0])
    assert isinstance(th, Theorem)
    with pytest.raises(KernelError):
        instantiate(th, {n: 2, m: 2})


def test_a1_true_neighbours():
    x2, yn = Var("x", (2,)), Var("y", (n,))
    th = prove_equal(Deriv(x2[0] * yn[0], x2, (0,)), yn[0])
    inst = instantiate(th, {n: 2})
    assert inst.rhs is Var("y", (2,))[0]
    xn = Var("x", (n,))
    th = prove_equal(Deriv(xn[0] * xn[0], xn, (0,)), 2 * xn[0])
    assert instantiate(th, {n: 2}).rhs is (2 * Var("x", (2,))[0])


def _no_capture(th):
    """The At of ``th.lhs`` read by at_elim agrees with ``th.rhs`` (a true theorem), or a refusal."""
    try:
        e = at_elim(th.lhs)
    except KernelError:
        return
    assert e.rhs is th.rhs, (e.rhs, th.rhs)


def test_a2_a_free_variable_reshaped_is_not_captured_by_a_renamed_param():
    pn, pm, vn = Var("p", (n,)), Var("p", (m,)), Var("v", (n,))
    inst = instantiate(at_elim(At(pn[0] + pm[0], (pn,), (vn,))), {n: 2, m: 2})
    _no_capture(inst)


def test_a2_a_free_variable_reshaped_is_not_captured_by_a_kept_param():
    p2, v2, pn = Var("p", (2,)), Var("v", (2,)), Var("p", (n,))
    inst = instantiate(at_elim(At(p2[0] + pn[0], (p2,), (v2,))), {n: 2})
    _no_capture(inst)
    p2v = Var("p", (2,))
    assert inst.rhs is (v2[0] + p2v[0])


def test_a2_true_neighbours():
    pn, qm, vn = Var("p", (n,)), Var("q", (m,)), Var("v", (n,))
    inst = instantiate(refl(At(pn[0] + qm[0], (pn,), (vn,))), {n: 2, m: 3})
    assert at_elim(inst.lhs).rhs is (Var("v", (2,))[0] + Var("q", (3,))[0])


def test_a1_a_hand_written_trace_step_is_refused(tmp_path):
    """The instance written into a trace by hand: ``verigrad check`` refuses it."""
    import json

    from verigrad.trace import FORMAT, VERSION, _Writer
    from verigrad.trace.command import check
    from verigrad.kernel.sizes import as_poly
    x2, xn = Var("x", (2,)), Var("x", (n,))
    th = prove_equal(Deriv(x2[0] * xn[0], x2, (0,)), xn[0])
    w = _Writer()
    steps, index = w.steps([th])
    false_lhs = Deriv(x2[0] * x2[0], x2, (0,))
    steps.append({"rule": "instantiate", "parents": [index[id(th)]],
                  "args": [w.arg(((n, as_poly(2)),))], "lhs": w.ref(false_lhs), "rhs": w.ref(x2[0])})
    trace = {"format": FORMAT, "version": VERSION, "objects": w.objects, "steps": steps,
             "claims": [{"name": "d(x x)/dx = x", "step": len(steps) - 1}]}
    path = tmp_path / "forged.trace.json"
    path.write_text(json.dumps(trace))
    code, verdicts = check([path])
    assert code != 0 and all(v["status"] != "PROVED" for v in verdicts), verdicts
