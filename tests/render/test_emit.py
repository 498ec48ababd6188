"""Emission: one public @main with several results, the manifest the runtime reads,
the module run by XLA agreeing with the JAX step it was lowered from and with the
plain-JAX reference step."""
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.frontends.stablehlo import StableHLOError, signature
from verigrad.render import configure, render
from verigrad.render import autodiff as A, emit as E, step as S
from verigrad.run import backend, manifest


def test_directory_and_manifest(mlp_dir):
    m = manifest.load(mlp_dir)            # the schema and the sha256 of both files
    assert {p.name for p in mlp_dir.iterdir()} == {"train_step.mlir", "forward.mlir", "manifest.json"}
    assert m.net == "mlp" and m.batch == 8 and m.optimizer["name"] == "adamw" and m.optimizer["betas"] == [0.9, 0.999]
    roles = [p.role for p in m.train_step.inputs]
    assert roles == ["param"] * 4 + ["opt_state"] * 8 + ["batch_x", "batch_y", "lr", "bias_correction1",
                                                         "bias_correction2"]
    assert [p.name for p in m.train_step.outputs][-1] == "loss"
    assert m.train_step.role("batch_x")[0].shape == (8, 8, 8, 1)
    decay = {p.name: p.decay for p in m.params}
    assert decay == {"params/fc1/W": True, "params/fc1/b": False, "params/head/W": True, "params/head/b": False}
    raw = json.loads((mlp_dir / "manifest.json").read_text())
    assert raw["render"]["net"] == "mlp" and raw["train_step"]["checked"]
    assert set(raw["certificates"]) >= {"network_backward", "loss_backward", "render_tie"}


def test_one_public_main_with_several_results(mlp_dir):
    text = (mlp_dir / "train_step.mlir").read_text()
    assert text.count("func.func public") == 1 and "tuple<" not in text
    sig = signature(text)
    assert len(sig.outputs) == 13 and all(s.dtype == "f32" for s in sig.inputs)


def test_sites_are_inputs_with_their_keep(vit_dir):
    m = manifest.load(vit_dir)
    masks = m.train_step.role("drop_mask")
    assert [p.name for p in masks] == ["site/block0/sA", "site/block0/sM", "site/block1/sA", "site/block1/sM"]
    assert [p.keep for p in masks] == [1.0, 1.0, 0.9, 0.9] and all(p.shape == (4,) for p in masks)
    assert [p.role for p in m.forward.inputs].count("drop_mask") == 4


@pytest.mark.parametrize("bad, match", [
    ("func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
     "func.func public @other(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}",
     "one public function @main, found @main, @other"),
    ("func.func public @main(%a: tensor<3xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.slice %a [0:2] : "
     "(tensor<3xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}", r"argument 0 \(a\) of @main is tensor<3xf32>"),
    ("func.func public @main(%a: tensor<2xf32>) -> tuple<tensor<2xf32>> {\n  %0 = stablehlo.tuple %a : "
     "tuple<tensor<2xf32>>\n  return %0 : tuple<tensor<2xf32>>\n}", "not a ranked tensor type"),
])
def test_module_checks_refuse(bad, match):
    port = {"name": "a", "role": "param", "shape": [2], "dtype": "f32"}
    with pytest.raises(StableHLOError, match=match):
        E.check_module(bad, [port], [dict(port, name="b")], "m.mlir")


def _arguments(m, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for p in m.train_step.inputs:
        x = rng.standard_normal(p.shape) * 0.1
        if p.role in ("opt_state", "drop_mask", "bias_correction1", "bias_correction2"):
            x = np.abs(x) + 0.5
        if p.role == "lr":
            x = np.asarray(0.01)
        out.append(np.asarray(x, np.float32))
    return out


def test_the_module_runs_as_the_function_it_was_lowered_from(mlp_dir):
    m = manifest.load(mlp_dir)
    net, cfg = configure("mlp", 8, opt="adamw")
    args = _arguments(m)
    exe = backend.compile(m.text(m.train_step), "xla", [p.name for p in m.train_step.inputs])
    got = [backend.to_host(x) for x in exe(*args)]
    want = jax.jit(S.train_step(net, cfg))(*args)
    for p, a, b in zip(m.train_step.outputs, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=p.name)


def test_one_step_agrees_with_the_plain_jax_reference(mlp_dir):
    """The rendered module (certified backward) against value_and_grad + the same
    AdamW: the new parameters and moments agree to float32 rounding."""
    m = manifest.load(mlp_dir)
    net, cfg = configure("mlp", 8, opt="adamw")
    args = _arguments(m, seed=3)
    exe = backend.compile(m.text(m.train_step), "xla", [p.name for p in m.train_step.inputs])
    got = [backend.to_host(x) for x in exe(*args)]
    want = jax.jit(A.reference_step(net, cfg))(*args)
    for p, a, b in zip(m.train_step.outputs, got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=p.name)


@pytest.mark.slow
def test_iree_runs_the_same_text(mlp_dir):
    why = backend.iree_available()
    if why:
        pytest.skip(why)
    m = manifest.load(mlp_dir)
    args = _arguments(m)
    names = [p.name for p in m.train_step.inputs]
    a = backend.compile(m.text(m.train_step), "xla", names)(*args)
    b = backend.compile(m.text(m.train_step), "iree", names)(*args)
    for x, y in zip(a, b):
        np.testing.assert_allclose(backend.to_host(x), backend.to_host(y), rtol=1e-4, atol=1e-5)


def test_trains_through_the_runtime(mlp_dir):
    from verigrad.run import train
    s = train.Trainer(manifest.load(mlp_dir), train.Config(epochs=2, lr=3e-3), progress=False).run()
    assert s.history[-1]["loss"] < s.history[0]["loss"] and s.test_accuracy > 0.5


@pytest.mark.parametrize("kwargs, match", [
    ({"net": "lenet"}, "unknown network 'lenet'"),
    ({"net": "mlp", "opt": "lamb"}, "unknown optimizer 'lamb'"),
    ({"net": "mlp", "drop_path": 1.0}, r"drop-path rate must be in \[0, 1\)"),
    ({"net": "mlp", "opt": "sgd", "betas": [0.9, 0.9]}, "sgd has no hyperparameter betas"),
])
def test_bad_configuration_is_named(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        render(out_dir=tmp_path, **kwargs)
