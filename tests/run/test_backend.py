"""Compiling text with XLA (and IREE): arguments are checked before every call."""
import numpy as np
import pytest

from verigrad.frontends.stablehlo import StableHLOError
from verigrad.run import backend

TEXT = """func.func public @main(%w: tensor<64x10xf32>, %x: tensor<2x64xf32>, %s: tensor<f32>) -> (tensor<2x10xf32>, tensor<f32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x64xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x10xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.multiply %1, %s : tensor<f32>
  return %0, %2 : tensor<2x10xf32>, tensor<f32>
}"""

BACKENDS = ["xla", pytest.param("iree", marks=pytest.mark.skipif(backend.iree_available() is not None,
                                                                 reason=str(backend.iree_available())))]


def _args(rng):
    return [rng.standard_normal((64, 10)).astype(np.float32), rng.standard_normal((2, 64)).astype(np.float32),
            np.float32(0.5)]


@pytest.mark.parametrize("name", BACKENDS)
def test_runs_and_agrees_with_numpy(name):
    exe = backend.compile(TEXT, name, names=["W", "x", "scale"])
    w, x, s = _args(np.random.default_rng(0))
    y, total = [backend.to_host(o) for o in exe(w, x, s)]
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(total, 0.5 * np.sum(x @ w), rtol=1e-4, atol=1e-4)
    assert exe.signature.outputs[0].shape == (2, 10)


@pytest.mark.parametrize("name", BACKENDS)
def test_outputs_feed_back_without_leaving_the_device(name):
    text = ("func.func public @main(%p: tensor<3xf32>, %lr: tensor<f32>) -> tensor<3xf32> {\n"
            "  %0 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<3xf32>\n"
            "  %1 = stablehlo.subtract %p, %0 : tensor<3xf32>\n  return %1 : tensor<3xf32>\n}")
    exe = backend.compile(text, name)
    p = exe.put(np.zeros(3, np.float32), 0)
    for _ in range(5):
        (p,) = exe(p, 0.25)
    assert not isinstance(p, np.ndarray)
    np.testing.assert_allclose(backend.to_host(p), [-1.25] * 3)


@pytest.mark.parametrize("bad, match", [
    (lambda a: [a[0].T.copy(), a[1], a[2]], r"argument 0 \(W\): expected tensor<64x10xf32>, got shape \(10, 64\)"),
    (lambda a: [a[0], a[1].astype(np.int32), a[2]], r"argument 1 \(x\): expected tensor<2x64xf32>, got .*int32"),
    (lambda a: [a[0], a[1].astype(np.float64), a[2]], r"argument 1 \(x\).*float64"),
    (lambda a: [a[0], a[1], np.ones(1, np.float32)], r"argument 2 \(scale\): expected tensor<f32>"),
    (lambda a: a[:2], r"takes 3 arguments, got 2"),
])
def test_wrong_arguments_are_named_before_the_call(bad, match):
    """PJRT itself would accept a 10x64 array in a 64x10 slot (same byte size)."""
    exe = backend.compile(TEXT, "xla", names=["W", "x", "scale"])
    with pytest.raises(backend.ArgumentError, match=match):
        exe(*bad(_args(np.random.default_rng(0))))


def test_device_arrays_are_checked_too():
    import jax
    exe = backend.compile(TEXT, "xla", names=["W", "x", "scale"])
    a = _args(np.random.default_rng(0))
    with pytest.raises(backend.ArgumentError, match="argument 0"):
        exe(jax.device_put(a[0].reshape(10, 64)), a[1], a[2])


def test_bad_text_and_unknown_backend():
    with pytest.raises(StableHLOError, match=r"<text>:1:1"):
        backend.compile("nonsense")
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        backend.compile(TEXT, "tpu")


def test_iree_absent_is_reported(monkeypatch):
    monkeypatch.setattr(backend, "iree_available", lambda: "IREE is not installed (iree); pip install 'verigrad[iree]'")
    with pytest.raises(backend.BackendUnavailable, match="verigrad\\[iree\\]"):
        backend.compile(TEXT, "iree")


@pytest.mark.skipif(backend.iree_available() is not None, reason=str(backend.iree_available()))
def test_iree_and_xla_agree_on_a_train_step(ref):
    text = ref.text(ref.train_step)
    rng = np.random.default_rng(0)
    args = [np.abs(rng.standard_normal(p.shape)).astype(np.float32) * 0.1 for p in ref.train_step.inputs]
    outs = {}
    for name in ("xla", "iree"):
        outs[name] = [backend.to_host(o) for o in backend.compile(text, name)(*args)]
    for a, b in zip(outs["xla"], outs["iree"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.skipif(backend.iree_available() is not None, reason=str(backend.iree_available()))
def test_training_on_iree_follows_xla(ref):
    from verigrad.run import train
    runs = {}
    for name in ("xla", "iree"):
        tr = train.Trainer(ref, train.Config(epochs=1, lr=3e-3, backend=name), progress=False)
        runs[name] = (tr.run(), tr.parameters())
    (sx, px), (si, pi) = runs["xla"], runs["iree"]
    assert si.steps == sx.steps and abs(si.loss - sx.loss) < 1e-3
    for name in px:
        np.testing.assert_allclose(pi[name], px[name], rtol=1e-3, atol=1e-4)


def test_device_arrays_alone_are_checked_by_the_trace():
    """Device arrays only take jax.jit's dispatch, which traces (and checks) every new
    signature: a transposed weight or an int32 batch is still named, and the right
    arrays still run."""
    import jax
    exe = backend.compile(TEXT, "xla", names=["W", "x", "scale"])
    a = [jax.device_put(v) for v in _args(np.random.default_rng(0))]
    good = exe(*a)
    with pytest.raises(backend.ArgumentError, match=r"argument 0 \(W\)"):
        exe(jax.device_put(np.asarray(a[0]).T.copy()), a[1], a[2])
    with pytest.raises(backend.ArgumentError, match=r"argument 1 \(x\)"):
        exe(a[0], jax.device_put(np.asarray(a[1]).astype(np.int32)), a[2])
    again = exe(*a)
    for g, h in zip(good, again):
        np.testing.assert_array_equal(backend.to_host(g), backend.to_host(h))
