"""Proof traces and ``verigrad check`` (issue 10): every PROVED can be replayed by the
kernel alone, in a fresh process that loads only the kernel and the trace decoder
(``verigrad.trace.replay``, untrusted: each step goes through the kernel's
``replay_step``); an edited or forged trace is refused."""
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import verigrad.trace
from verigrad.kernel import (IndexVar, IntCond, IntVal, KernelError, Num, SizeSym, Sum, Theorem, Var, instantiate,
                             prove_equal, refl, vjp_statement)
from verigrad.kernel.theorem import replay_step
from verigrad.trace import trace_of, write_trace
from verigrad.trace.command import BOOT, check
from verigrad.trace.replay import TraceError, extra_modules, replay

n = SizeSym("n")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "verigrad.cli", *args], capture_output=True, text=True, timeout=600)


def small_proof():
    b = IndexVar("b", n)
    th = prove_equal(Sum(b, IntCond(b, ">=", 1)), IntVal(n - 1))
    return th, instantiate(th, {n: 3})


def test_a_trace_replays_in_a_process_that_loads_only_the_kernel(tmp_path):
    th, at3 = small_proof()
    path = write_trace(tmp_path / "p.trace.json", [("window", th), ("window at 3", at3)])
    code, verdicts = check([path])
    assert code == 0, verdicts
    assert [v["claim"] for v in verdicts] == ["window", "window at 3"]
    assert all(v["status"] == "PROVED" and "sum_window" in v["axioms"] for v in verdicts)
    shown = cli("check", str(path))
    assert shown.returncode == 0 and shown.stdout.count(": PROVED ") == 2, shown.stdout + shown.stderr
    assert "Sum[b<n]([b >= 1]) = n - 1" in shown.stdout.replace("b ≥ 1", "b >= 1") or "Sum" in shown.stdout
    rows = [json.loads(line) for line in cli("check", "--json", str(path)).stdout.splitlines()]
    assert [r["statement"] for r in rows] and all(r["status"] == "PROVED" for r in rows)


def test_the_checker_loads_the_kernel_and_the_decoder_only(tmp_path):
    th, _ = small_proof()
    path = write_trace(tmp_path / "p.trace.json", [("window", th)])
    listing = BOOT.replace("sys.exit(main(sys.argv[2:]))", "main(sys.argv[2:])\nprint(sorted(m for m in sys.modules "
                           "if m.startswith(('verigrad', 'jax'))))")
    root = str(Path(verigrad.trace.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-I", "-c", listing, root, str(path)], capture_output=True, text=True)
    loaded = eval(done.stdout.splitlines()[-1])
    assert {m for m in loaded if not m.startswith("verigrad.kernel.")} \
        == {"verigrad", "verigrad.kernel", "verigrad.trace", "verigrad.trace.replay"}, loaded


def test_the_checker_refuses_to_report_after_loading_more():
    bare = types.ModuleType
    clean = {m: bare(m) for m in ("verigrad", "verigrad.kernel", "verigrad.kernel.theorem", "verigrad.trace",
                                  "verigrad.trace.replay", "json")}
    assert extra_modules(clean) == []
    assert extra_modules({**clean, "verigrad.report.printing": bare("p")}) == ["verigrad.report.printing"]
    assert extra_modules({**clean, "jax": bare("jax")}) == ["jax"]
    ran = bare("verigrad.trace")
    ran.__file__ = "verigrad/trace/__init__.py"         # the package's __init__ (the writer) was run
    assert extra_modules({**clean, "verigrad.trace": ran}) == ["verigrad.trace"]
    assert extra_modules(sys.modules)                   # this process has loaded all of verigrad


def test_replay_step_is_the_kernel_check_of_a_recorded_statement():
    x = Var("x", (n,))
    th = refl(x)
    again = replay_step("refl", [], (x,), None, (x, x, (), ()))
    assert again.lhs is x and again.rule == "refl"
    assert replay_step("symm", [th], (), None, (x, x, (), ())).rule == "symm"
    with pytest.raises(KernelError, match="states something other"):
        replay_step("refl", [], (x,), None, (x, Var("y", (n,)), (), ()))
    with pytest.raises(KernelError, match="unknown rule"):
        replay_step("forge", [], (), None, (x, x, (), ()))
    with pytest.raises(KernelError, match="the decision fails"):
        replay_step("decide", [], (x, Var("y", (n,))), [], (x, Var("y", (n,)), (), ()))


def test_an_edited_step_is_refused(tmp_path):
    th, at3 = small_proof()
    trace = trace_of([("window at 3", at3)])
    assert replay(json.loads(json.dumps(trace)))
    # the instantiation now claims the size 4 for the same statement: not what the rule gives
    edited = json.loads(json.dumps(trace))
    step = next(s for s in edited["steps"] if s["rule"] == "instantiate")
    k = len(edited["objects"])
    edited["objects"].append(["poly", [[4, []]]])
    step["args"][0][1][2] = k
    with pytest.raises(TraceError, match="step"):
        replay(edited)
    # a recorded statement that differs from what the rule proves
    edited = json.loads(json.dumps(trace))
    edited["steps"][0]["rhs"] = edited["steps"][0]["lhs"]
    with pytest.raises(TraceError, match="states something other"):
        replay(edited)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(edited))
    code, verdicts = check([path])
    assert code == 1 and verdicts[0]["status"] == "REFUSED"


def test_a_forged_theorem_does_not_replay():
    x, y = Var("x", (n,)), Var("y", (n,))
    fake = object.__new__(Theorem)
    real = refl(x)
    for k in Theorem.__slots__[:-1]:
        object.__setattr__(fake, k, getattr(real, k))
    object.__setattr__(fake, "rhs", y)                       # |- x = y, "by refl"
    with pytest.raises(TraceError):
        replay(json.loads(json.dumps(trace_of([("forged", fake)]))))


def test_malformed_traces_are_refused():
    for bad in ({}, {"format": "verigrad-proof-trace", "version": 99},
                {"format": "verigrad-proof-trace", "version": 1, "objects": [["Var", 7]]},
                {"format": "verigrad-proof-trace", "version": 1, "objects": [["index", "_1_0", ["t"]]]},
                {"format": "verigrad-proof-trace", "version": 1, "objects": [], "steps": [{"rule": "forge"}]}):
        with pytest.raises(TraceError):
            replay(bad)


def test_a_vjp_proof_with_hook_choices_replays():
    d = SizeSym("d")
    x, dy = Var("x", (n, d)), Var("dy", (n, d))
    i, j, k = IndexVar("i", n), IndexVar("j", d), IndexVar("k", d)
    from verigrad.kernel import Func, Lamda
    e = lambda t: Func("exp", (t,))  # noqa: E731
    p = Lamda([i, j], e(x[i, j]) / Sum(k, e(x[i, k])))
    back = Lamda([i, j], p[i, j] * (dy[i, j] - Sum(k, dy[i, k] * p[i, k])))
    th = prove_equal(back, vjp_statement(p, x, dy))
    assert isinstance(th, Theorem) and th.args[2], "the decision made untrusted choices"
    (name, again), = replay(json.loads(json.dumps(trace_of([("softmax rows", th)]))))
    assert again.lhs is th.lhs and again.rhs is th.rhs


def test_the_library_replays(tmp_path):
    out = tmp_path / "proofs"
    done = cli("verify", "--proofs", str(out), "--no-cache")
    assert done.returncode == 0, done.stderr[-2000:]
    traces = sorted(out.glob("*.json"))
    assert len(traces) >= 70
    code, verdicts = check(traces)
    assert code == 0, [v for v in verdicts if v["status"] != "PROVED"][:3]
    assert len(verdicts) >= len(traces) and all(v["status"] == "PROVED" for v in verdicts)


def test_certificates_replay(tmp_path):
    out = tmp_path / "proofs"
    done = cli("certificates", "--only", "layers,rules,seed", "--layers", "dense,softmax,layer_norm,conv2d_s1_same",
               "--proofs", str(out))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    traces = sorted(out.glob("*.json"))
    assert {p.name.split(".")[0] for p in traces} >= {"layer-dense", "layer-softmax", "layer-layer_norm"}
    code, verdicts = check(traces)
    assert code == 0 and all(v["status"] == "PROVED" for v in verdicts), verdicts[:3]


@pytest.mark.slow
def test_every_certificate_replays(tmp_path):
    out = tmp_path / "proofs"
    done = cli("certificates", "--proofs", str(out))
    assert done.returncode == 0, done.stdout[-2000:]
    code, verdicts = check(sorted(out.glob("*.json")))
    assert code == 0 and all(v["status"] == "PROVED" for v in verdicts), verdicts[:3]


def test_certify_writes_a_proof_only_of_what_is_proved(tmp_path):
    path = tmp_path / "softmax.json"
    done = cli("certify", "examples/certify/softmax.py:softmax", "--shape", "x=n,d", "--proof", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    shown = cli("check", str(path))
    assert shown.returncode == 0 and "dx = J^T dy" in shown.stdout, shown.stdout
