"""``--assume "inv == argsort(idx)"``: one integer argument defined by another. With
``permutation(idx)`` (``idx = argsort(P)``) the argument ``inv`` is modelled exactly as
``argsort(argsort(P))``, the inverse permutation the kernel's permutation rules know, and
inputs are drawn with ``inv`` computed from ``idx``. The gather whose backward gathers the
cotangent by the inverse permutation it was handed is PROVED under both assumptions and
REFUTED without the second; wrong backwards are never PROVED; what is not modelled
exactly is refused naming the assumption."""
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad
from verigrad.cli import main

SHAPES = {"x": "n, d", "idx": "n:int32", "inv": "n:int32"}
BOTH = ["permutation(idx)", "inv == argsort(idx)"]


def vjp(fwd_fn, bwd_fn):
    """A custom_vjp whose primal is ``fwd_fn`` (residuals: the arguments)."""
    f = jax.custom_vjp(fwd_fn)
    f.defvjp(lambda *a: (fwd_fn(*a), a), bwd_fn)
    return f


def _take(x, idx, inv):
    return x[idx]


# out[i] = x[idx[i]]: the cotangent of x[j] is g[i] at the i with idx[i] = j, i = argsort(idx)[j]
gather = vjp(_take, lambda r, g: (g[r[2]], None, None))
by_idx = vjp(_take, lambda r, g: (g[r[1]], None, None))             # wrong: idx, not its inverse
shifted = vjp(_take, lambda r, g: (g[r[2] + 1], None, None))        # wrong: off by one (clamped at the end)


def _satisfies(ce):
    idx = np.asarray(ce.inputs["idx"])
    inv = np.asarray(ce.inputs["inv"])
    return sorted(idx.tolist()) == list(range(len(idx))) and inv.tolist() == np.argsort(idx).tolist()


def _genuine(cert, fn):
    """jax.vjp of the undecorated forward and the custom backward differ at the entry."""
    ce = cert.counterexample
    with jax.enable_x64(True):
        x, idx, inv = (jnp.asarray(ce.inputs[a]) for a in ("x", "idx", "inv"))
        ct = jnp.asarray(ce.cotangents["dy"])
        want = jax.vjp(lambda x: fn.fun(x, idx, inv), x)[1](ct)[0]
        got = jax.vjp(lambda x: fn(x, idx, inv), x)[1](ct)[0]
    i = tuple(ce.index)
    assert abs(float(want[i]) - float(got[i])) > 1e-6 * max(abs(float(want[i])), 1e-9)
    assert float(got[i]) == pytest.approx(ce.got, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("second", ["inv == argsort(idx)", "inv == jnp.argsort(idx)", "jnp.argsort(idx) == inv",
                                    "inv == idx.argsort()", "inv == np.argsort(idx, kind='stable')"])
def test_gather_by_the_inverse_is_proved_under_both(second):
    cert = verigrad.certify(gather, SHAPES, assume=["permutation(idx)", second])
    assert cert.status == "PROVED", cert.detail
    assert any(h.startswith(f"assumes {second} ") and "argsort(argsort(idx_keys))" in h for h in cert.hypotheses)
    assert any(h.startswith("assumes permutation(idx) ") for h in cert.hypotheses)
    assert all(h in cert.side_conditions for h in cert.hypotheses)
    assert "argsort_inverse" in cert.axioms


def test_the_order_of_the_assumptions_does_not_matter():
    assert verigrad.certify(gather, SHAPES, assume=list(reversed(BOTH))).status == "PROVED"


def test_without_the_relation_it_is_refuted_by_inputs_that_violate_it():
    cert = verigrad.certify(gather, SHAPES, assume="permutation(idx)")
    assert cert.status == "REFUTED"
    ce = cert.counterexample
    idx = np.asarray(ce.inputs["idx"])
    assert sorted(idx.tolist()) == list(range(len(idx)))           # the first assumption holds
    assert not _satisfies(ce)                                       # the second does not
    _genuine(cert, gather)


@pytest.mark.parametrize("wrong", [by_idx, shifted], ids=["g[idx]", "g[inv+1]"])
def test_a_wrong_backward_is_never_proved(wrong):
    cert = verigrad.certify(wrong, SHAPES, assume=BOTH)
    assert cert.status in ("REFUTED", "UNKNOWN") and cert.status != "PROVED"
    if cert.status == "REFUTED":                                    # drawn inside the precondition
        assert _satisfies(cert.counterexample)
        _genuine(cert, wrong)


def test_a_chain_of_inverses():
    """``back == argsort(inv)`` after ``inv == argsort(idx)``: back is idx again, so the
    VJP of ``x[inv]`` is the gather by ``back``."""
    f = vjp(lambda x, idx, inv, back: x[inv], lambda r, g: (g[r[3]], None, None, None))
    shapes = dict(SHAPES, back="n:int32")
    cert = verigrad.certify(f, shapes, assume=["back == argsort(inv)", "permutation(idx)", "inv == argsort(idx)"])
    assert cert.status == "PROVED", cert.detail
    wrong = vjp(lambda x, idx, inv, back: x[inv], lambda r, g: (g[r[2]], None, None, None))
    assert verigrad.certify(wrong, shapes, assume=["back == argsort(inv)", "permutation(idx)",
                                                   "inv == argsort(idx)"]).status == "REFUTED"


@pytest.mark.parametrize("assume,shapes,message", [
    (["inv == argsort(idx)"], SHAPES, r"idx has no model that makes argsort\(idx\) exact .*permutation\(idx\)"),
    (["0 <= idx < n", "inv == argsort(idx)"], SHAPES, "allows ties"),
    (["permutation(idx)", "x == argsort(idx)"], SHAPES, "x is float.*two vectors of integers"),
    (["permutation(idx)", "inv == argsort(x)"], SHAPES, "x is float"),
    (["permutation(idx)", "q == argsort(idx)"], SHAPES, "q .* is not an argument"),
    (["permutation(idx)", "inv == argsort(idx)"], dict(SHAPES, inv="m:int32"), "argsort keeps the length"),
    (["permutation(idx)", "permutation(inv)", "inv == argsort(idx)"], SHAPES, "inv already has an assumption"),
    (["permutation(idx)", "inv == argsort(idx)", "inv == argsort(idx)"], SHAPES, "more than one"),
    (["permutation(idx)", "inv == argsort(idx, descending=True)"], SHAPES, "descending=True"),
    (["permutation(idx)", "inv == argsort(-idx)"], SHAPES, "one argument's name"),
    (["permutation(idx)", "argsort(idx) == argsort(inv)"], SHAPES, "one side must be an argument's name"),
    (["permutation(idx)", "inv == argsort(inv)"], SHAPES, "its own argsort"),
    (["permutation(idx)", "inv + 1 == argsort(idx)"], SHAPES, "side opposite argsort"),
])
def test_what_is_not_modelled_exactly_is_refused(assume, shapes, message):
    f = vjp(_take, lambda r, g: (jnp.zeros_like(r[0]).at[r[1]].add(g), None, None))
    with pytest.raises(verigrad.VerigradError, match=message) as e:
        verigrad.certify(f, shapes, assume=assume)
    assert "--assume" in str(e.value)


MODULE = """import jax

def _take(x, idx, inv):
    return x[idx]

gather = jax.custom_vjp(_take)
gather.defvjp(lambda x, idx, inv: (x[idx], inv), lambda inv, g: (g[inv], None, None))
"""


def _args(f, *assume):
    out = [f"{f}:gather", "--shape", "x=n,d", "--shape", "idx=n:int32", "--shape", "inv=n:int32"]
    for a in assume:
        out += ["--assume", a]
    return out


@pytest.mark.parametrize("assume,message", [
    (["inv == argsort(idx)"], "state --assume 'permutation"),
    (["permutation(idx)", "inv == argsort(idx, axis=1)"], "axis=1"),
    (["permutation(idx)", "inv == argsort(idx"], "not an expression"),
])
def test_malformed_assumptions_are_exit_code_3(tmp_path, capsys, assume, message):
    import re
    f = tmp_path / "m.py"
    f.write_text(MODULE)
    assert main(["certify", *_args(f, *assume)]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("verigrad certify: error: --assume")
    assert re.search(message, err), err


def test_the_command_proves_it_and_refuses_without_a_traceback(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(MODULE)
    r = subprocess.run([sys.executable, "-m", "verigrad.cli", "certify", *_args(f, *BOTH)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().splitlines()[-1] == "PROVED", r.stdout + r.stderr
    assert "assumes inv == argsort(idx)" in r.stdout
    r = subprocess.run([sys.executable, "-m", "verigrad.cli", "certify", *_args(f, "inv == argsort(idx)")],
                       capture_output=True, text=True)
    assert r.returncode == 3 and "Traceback" not in r.stderr and r.stdout == ""
