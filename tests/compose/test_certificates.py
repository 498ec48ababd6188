"""Issue 4's certificates: every zoo layer, every composition rule (and its control),
every network by construction, and the seed-003 block."""
import json
import subprocess
import sys

import jax
import pytest

from verigrad.kernel import Theorem, vjp_statement
from verigrad.nn import compose, report, rules, seed003
from verigrad.nn.layers.zoo import ZOO
from verigrad.nn.nets import NETS


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_zoo_layer_is_proved_for_all_sizes(name):
    (rec,) = report.layer_records([name])
    assert rec.status == "PROVED", rec.detail
    assert rec.sizes and all(s == "PROVED" for s in rec.wrt.values())
    assert rec.float32_error is not None and rec.float32_error < 1e-4


@pytest.mark.parametrize("rule", rules.standard_rules(), ids=lambda r: r.name)
def test_every_rule_is_proved_once_and_its_control_refuted(rule):
    assert isinstance(rule.theorem, Theorem)
    control = rules.refute_control(rule)
    assert control.status == "REFUTED", control.evidence
    assert control.counterexample.expected != control.counterexample.got


@pytest.mark.parametrize("net", sorted(NETS))
def test_every_network_is_certified_by_construction(net):
    (batch,) = jax.export.symbolic_shape("B")
    cert = compose.certify(NETS[net](batch).layer)
    assert cert.proved, {n: str(t)[:200] for n, t in cert.theorems.items() if not isinstance(t, Theorem)}
    for name, th in cert.theorems.items():
        var = cert.x if name == cert.x.name else cert.params[name]
        assert th.rhs is vjp_statement(cert.forward, var, cert.dy)   # exactly the VJP of the network
    assert set(cert.params) == {p.name for p in NETS[net](2).params}  # every parameter is covered


def test_a_network_with_one_buggy_layer_is_not_proved():
    """The MLP with its hidden dense layer's backward swapped for the zoo's control."""
    from verigrad.nn import combinators as C
    from verigrad.nn import layers as L
    (B,) = jax.export.symbolic_shape("B")
    good = L.dense((B, 64), 32)
    bad = good.with_backward(ZOO["dense"].mutant(good))
    net = C.chain(C.named("fc1", bad), C.named("act", L.relu((B, 32))), C.named("head", L.dense((B, 32), 10)))
    cert = compose.certify(net)
    assert not cert.proved
    assert isinstance(cert.theorems["head/W"], Theorem)       # the head's gradient does not read fc1's bug


def test_the_seed_003_theorems_and_controls():
    results = {t.name: t for t in seed003.theorems()}
    for name in ("fwdOD_none", "fwdOD_eq_sites", "cotInD_eq_vjp", "cotInD_eq_vjp (MLP weights)", "cotInD_none",
                 "dropPath_vjp_is_self"):
        assert results[name].status == "PROVED", name
        assert isinstance(results[name].result, Theorem)
    controls = [t for n, t in results.items() if n.startswith("control")]
    assert len(controls) == 3 and all(t.status == "REFUTED" for t in controls)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "verigrad.cli", "certificates", *args], capture_output=True,
                          text=True, timeout=600)


def test_certificates_command_json():
    r = _cli("--only", "rules,seed,layers", "--layers", "dense,relu", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["ok"] is True
    kinds = {c["kind"] for c in out["certificates"]}
    assert kinds == {"layer", "rule"}
    dense = next(c for c in out["certificates"] if c["name"] == "dense")
    assert dense["status"] == "PROVED" and dense["float32_error"] < 1e-5 and "ring" in dense["axioms"]
    assert {t["name"] for t in out["seed003"]} >= {"fwdOD_none", "cotInD_eq_vjp"}


def test_certificates_command_bad_input():
    r = _cli("--only", "everything")          # a word outside a fixed set: an argument error
    assert r.returncode == 2 and "unknown part everything" in r.stderr and "Traceback" not in r.stderr
