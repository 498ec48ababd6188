"""Every zoo layer: the hand-written backward is jax.vjp of the forward (input and every
parameter, two concrete sizes), its control (a realistic bug) is not, and both trace
at symbolic sizes with only the primitives a certifier imports."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from nn_oracle import FAIL, PASS, disallowed, mismatch, random_case, trace
from verigrad.nn import layers as L
from verigrad.nn.layers.numerics import float32_error
from verigrad.nn.layers.zoo import ENTRIES, ZOO

CASES = [(e.name, i) for e in ENTRIES for i in range(len(e.examples))]


@pytest.mark.parametrize("name,example", CASES)
def test_backward_is_the_vjp(name, example):
    entry = ZOO[name]
    layer = entry.at(**entry.examples[example])
    assert mismatch(layer, random_case(layer, seed=example)) < PASS


@pytest.mark.parametrize("name", sorted(ZOO))
def test_control_is_caught(name):
    entry = ZOO[name]
    control = entry.control(**entry.examples[0])
    assert mismatch(control, random_case(control)) > FAIL, entry.bug


@pytest.mark.parametrize("name", sorted(ZOO))
def test_traces_at_symbolic_sizes_with_plain_primitives(name):
    layer = ZOO[name].symbolic()
    assert not any(isinstance(d, int) for d in layer.x)      # every input size symbolic
    assert disallowed(layer) == set()


def test_the_zoo_covers_issue_4():
    families = {"dense", "bias", "relu", "gelu_tanh", "gelu_erf", "sigmoid", "tanh", "silu", "softmax",
                "log_softmax", "softmax_xent", "layer_norm", "rms_norm", "batch_norm", "layer_scale",
                "conv2d_s1_same", "conv2d_s1_valid", "conv2d_s2_same", "conv2d_s2_valid",
                "depthwise_conv2d_s1_same", "max_pool", "avg_pool", "global_avg_pool", "flatten",
                "patch_embed", "mhsa", "transformer_mlp_tanh", "transformer_mlp_erf", "dropout", "drop_path"}
    assert families <= set(ZOO)
    for e in ENTRIES:
        assert len(e.examples) >= 2 and e.bug


# -- the forwards mean what they say (independent references) ------------------------


@pytest.mark.parametrize("stride,padding,size", [(1, "SAME", 5), (2, "SAME", 6), (2, "SAME", 7),
                                                 (1, "VALID", 5), (2, "VALID", 7), (2, "VALID", 8)])
def test_conv2d_pads_as_lax_does(stride, padding, size):
    layer = L.conv2d((2, size, size + 1, 3), 4, stride=stride, padding=padding)
    params, x, _, _ = random_case(layer)
    want = lax.conv_general_dilated(x, params["W"], (stride, stride), padding,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")) + params["b"]
    got = layer.forward(params, x)
    assert got.shape == tuple(layer.y) == want.shape
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert mismatch(layer, random_case(layer, seed=1)) < PASS


def test_depthwise_conv_filters_each_channel_alone():
    layer = L.depthwise_conv2d((1, 5, 5, 3), stride=1, padding="SAME", bias=False)
    params, x, _, _ = random_case(layer)
    for c in range(3):
        one = lax.conv_general_dilated(x[..., c:c + 1], params["W"][..., c:c + 1], (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
        np.testing.assert_allclose(layer.forward(params, x)[..., c], one[..., 0], atol=1e-12)


def test_pools_against_reduce_window():
    x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 4, 6, 3)))
    mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    np.testing.assert_array_equal(L.max_pool(x.shape).forward({}, x), mx)
    avg = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    np.testing.assert_allclose(L.avg_pool(x.shape).forward({}, x), avg, atol=1e-14)
    np.testing.assert_allclose(L.global_avg_pool(x.shape).forward({}, x), x.mean(axis=(1, 2)), atol=1e-14)


def test_max_pool_ties_go_to_the_first_argument():
    layer = L.max_pool((1, 2, 2, 1))
    x = jnp.ones((1, 2, 2, 1))
    dx, _ = layer.backward({}, x, jnp.full((1, 1, 1, 1), 3.0))
    assert dx[0, :, :, 0].tolist() == [[3.0, 0.0], [0.0, 0.0]]
    x = jnp.asarray([[1.0, 2.0], [2.0, 0.0]]).reshape(1, 2, 2, 1)   # x01 ties x10: x01 wins
    dx, _ = layer.backward({}, x, jnp.full((1, 1, 1, 1), 3.0))
    assert dx[0, :, :, 0].tolist() == [[0.0, 3.0], [0.0, 0.0]]


def test_relu_derivative_at_zero_is_zero():
    x = jnp.asarray([[-1.0, 0.0, 2.0]])
    dx, _ = L.relu(x.shape).backward({}, x, jnp.ones_like(x))
    assert dx.tolist() == [[0.0, 0.0, 1.0]]


def test_cross_entropy_with_smoothed_targets():
    rng = np.random.default_rng(0)
    logits = jnp.asarray(rng.standard_normal((4, 10)))
    t = L.smooth_labels(jnp.asarray([3, 0, 9, 3]), 10, 0.1, jnp.float64)
    np.testing.assert_allclose(t.sum(axis=1), 1.0)
    assert float(t[0, 3]) == pytest.approx(0.91) and float(t[0, 0]) == pytest.approx(0.01)
    layer = L.softmax_xent(logits.shape)
    loss = layer.forward({}, logits, t)
    want = -jnp.mean(jnp.sum(t * jax.nn.log_softmax(logits), axis=1))
    assert float(loss) == pytest.approx(float(want), rel=1e-12)
    dx, _ = layer.backward({}, logits, t, jnp.asarray(1.0))
    np.testing.assert_allclose(dx, (jax.nn.softmax(logits) - t) / 4, atol=1e-14)


def test_drop_path_vjp_is_the_drop_path_itself():
    layer = L.drop_path((3, 2, 4))
    params, x, (s,), dy = random_case(layer)
    dx, grads = layer.backward(params, x, s, dy)
    np.testing.assert_array_equal(dx, layer.forward(params, dy, s))
    assert grads == {}
    assert layer.forward({}, x, None) is x          # an absent site is the identity


def test_softmax_ignores_the_row_max():
    layer = L.softmax((2, 5))
    x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 5)))
    np.testing.assert_allclose(layer.forward({}, x + 1000.0), layer.forward({}, x), atol=1e-14)


# -- parameters and errors ------------------------------------------------------------


def test_parameters_declare_shapes_initializers_and_decay():
    dense = L.dense((2, 3), 4)
    assert [(p.name, p.shape, p.decay) for p in dense.params] == [("W", (3, 4), True), ("b", (4,), False)]
    norm = L.layer_norm((2, 3, 5))
    assert not any(p.decay for p in norm.params)
    a, b = dense.init(seed=1), dense.init(seed=1)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["W"], dense.init(seed=2)["W"])
    assert float(jnp.abs(a["b"]).max()) == 0.0
    w = L.glorot_uniform()(np.random.default_rng(0), (300, 200))
    assert abs(float(np.std(w)) - np.sqrt(2 / 500)) < 0.01


def test_symbolic_parameters_cannot_be_initialized():
    with pytest.raises(ValueError, match="symbolic shape"):
        ZOO["dense"].symbolic().init()


def test_bad_shapes_are_named():
    h, = jax.export.symbolic_shape("h")
    with pytest.raises(ValueError, match="conv2d.*mod stride 2.*2\\*h"):
        L.conv2d((1, h, h, 1), 2, stride=2)
    with pytest.raises(ValueError, match="max_pool.*multiple of 2"):
        L.max_pool((1, 5, 4, 1))
    with pytest.raises(ValueError, match="mhsa.*not 3 heads"):
        L.mhsa((1, 4, 8), 3)
    with pytest.raises(ValueError, match="rank 4"):
        L.conv2d((2, 3), 4)
    with pytest.raises(ValueError, match="unknown activation"):
        L.activation("swish2", (2, 3))


def test_float32_error_is_measured():
    dense = L.dense((4, 8), 3)
    err = float32_error(dense)
    assert 0 < err < 1e-5
    assert float32_error(L.flatten((2, 2, 3, 1))) == 0.0     # moves entries, rounds nothing


def test_trace_records_symbolic_shapes():
    layer = ZOO["conv2d_s2_same"].symbolic()
    fwd, bwd = trace(layer)
    assert "2*h" in str(fwd) and "pad" in str(bwd) and "rev" in str(bwd)
