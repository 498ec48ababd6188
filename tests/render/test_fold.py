"""Zero pads folded into convolutions (verigrad.render.fold): the same function, the
forms jax.jit(jax.grad) emits, and a step that still ties."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.nn.layers import conv as C
from verigrad.render import render
from verigrad.render.emit import lower
from verigrad.render.fold import fold_pads
from verigrad.run.manifest import load


@pytest.mark.parametrize("stride,padding,k", [(1, "SAME", 3), (2, "SAME", 3), (2, "VALID", 3), (2, "SAME", 1),
                                              (1, "VALID", 2), (2, (1, 0), 3)])
def test_folding_keeps_the_convolution_backward(stride, padding, k):
    x_shape, c_out = (3, 8, 7, 4), 5
    ah, aw = C.axis(x_shape[1], k, stride, padding), C.axis(x_shape[2], k, stride, padding)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((k, k, x_shape[3], c_out)).astype(np.float32)
    dy = rng.standard_normal((x_shape[0], ah.out, aw.out, c_out)).astype(np.float32)

    def backward(x, w, dy):
        return C.conv_kernel_vjp(x, dy, ah, aw), C.conv_input_vjp(dy, w, ah, aw)

    want = jax.jit(backward)(x, w, dy)
    got = jax.jit(fold_pads(backward))(x, w, dy)
    for a, b in zip(want, got):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-5)
    # and JAX's own transpose agrees: the folded forms are jax.vjp's
    _, vjp = jax.vjp(lambda x, w: C.conv(x, w, ah, aw), x, w)
    dx, dw = vjp(dy)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(dw), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(dx), rtol=1e-4, atol=1e-4)


def test_the_kernel_gradient_reads_no_padded_copy():
    ah = aw = C.axis(8, 3, 2, "SAME")

    def kernel_grad(x, dy):
        return C.conv_kernel_vjp(x, dy, ah, aw)

    structs = (jax.ShapeDtypeStruct((2, 8, 8, 4), jnp.float32), jax.ShapeDtypeStruct((2, 4, 4, 5), jnp.float32))
    plain = jax.jit(kernel_grad).lower(*structs).as_text()
    folded = lower(kernel_grad, structs)
    assert plain.count("stablehlo.pad") == 2
    assert "stablehlo.pad" not in folded
    assert "rhs_dilate = [2, 2]" in folded and "pad = [[0, 1], [0, 1]]" in folded


def test_a_folded_resnet_step_ties(tmp_path):
    """Stride 2 and a projection skip: the kernel gradients with rhs_dilation and
    padding (negative too) are checked against the certified math."""
    directory = render("resnet", tmp_path, batch=2, opt="adamw", options={"widths": [2, 3]})
    text = (directory / "train_step.mlir").read_text()
    assert "rhs_dilate = [2, 2]" in text
    cert = load(directory).certificates["render_tie"]["train_step"]
    assert all(r["status"] == "CHECKED" for r in cert["results"].values())


@pytest.mark.parametrize("stride", [1, 2])
def test_folding_keeps_the_depthwise_backward(stride):
    """Grouped convolutions (feature_group_count = C): the edge padding folds the same."""
    x_shape = (2, 8, 8, 3)
    ah = aw = C.axis(8, 3, stride, "SAME")
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((3, 3, 1, 3)).astype(np.float32)
    dy = rng.standard_normal((2, ah.out, aw.out, 3)).astype(np.float32)

    def backward(x, w, dy):
        return C.depthwise_kernel_vjp(x, dy, ah, aw), C.conv_input_vjp(dy, w, ah, aw, depthwise=True)

    want = jax.jit(backward)(x, w, dy)
    got = jax.jit(fold_pads(backward))(x, w, dy)
    for a, b in zip(want, got):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-5)
