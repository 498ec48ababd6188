"""The networks for 8x8 digits: backward = jax.vjp (input and every parameter, two batch
sizes, drop-path masks included), a network built with one buggy layer is caught,
every network traces at a symbolic batch size, and the parameter lists say what they
should."""
import jax
import numpy as np
import pytest

from nn_oracle import FAIL, PASS, compiled, disallowed, mismatch, random_case
from verigrad.nn import combinators as C
from verigrad.nn import layers as L
from verigrad.nn.layers.core import scale_examples
from verigrad.nn.layers.zoo import ZOO
from verigrad.nn.nets import NETS, keep_ramp, vit


@pytest.mark.parametrize("name", sorted(NETS))
@pytest.mark.parametrize("batch", [2, 3])
def test_network_backward_is_the_vjp(name, batch):
    net = NETS[name](batch)
    assert net.layer.x == (batch, 8, 8, 1) and net.layer.y == (batch, 10)
    assert mismatch(net.layer, random_case(net.layer, seed=batch)) < PASS


def test_flat_block_vit_is_the_composed_vit():
    flat, composed = vit(2, flat=True), vit(2)
    assert flat.params == composed.params and flat.sites == composed.sites
    params, x, masks, dy = random_case(composed.layer)
    fn = lambda p, x, m, dy: ((flat.layer.forward(p, x, *m), flat.layer.backward(p, x, *m, dy)),
                              (composed.layer.forward(p, x, *m), composed.layer.backward(p, x, *m, dy)))
    (ya, (dxa, ga)), (yb, (dxb, gb)) = jax.tree.map(np.asarray, compiled(fn, params, x, masks, dy)(params, x, masks, dy))
    np.testing.assert_allclose(ya, yb, atol=1e-12)
    np.testing.assert_allclose(dxa, dxb, atol=1e-12)
    for k in gb:
        np.testing.assert_allclose(ga[k], gb[k], atol=1e-12, err_msg=k)


# -- a network built with one buggy piece is caught ------------------------------------


def _buggy(constructor, entry):
    return lambda *a, **k: (lambda layer: layer.with_backward(ZOO[entry].mutant(layer)))(constructor(*a, **k))


_SITE_RESIDUAL = C.site_residual


def _site_residual_skip_reads_dropped(branch, site="s", batched=True):
    good = _SITE_RESIDUAL(branch, site, batched)

    def backward(params, x, s, *rest):
        *aux, dy = rest
        dxf, grads = branch.backward(params, x, *aux, scale_examples(s, dy))
        return scale_examples(s, dy) + dxf, grads
    return good.with_backward(backward)


CONTROLS = {
    "mlp": (L, "dense", _buggy(L.dense, "dense")),
    "cnn": (L, "conv2d", _buggy(L.conv2d, "conv2d_s1_same")),
    "resnet": (L, "batch_norm", _buggy(L.batch_norm, "batch_norm")),
    "vit": (C, "site_residual", _site_residual_skip_reads_dropped),
}


@pytest.mark.parametrize("name", sorted(NETS))
def test_network_with_a_buggy_piece_is_caught(name, monkeypatch):
    module, attr, buggy = CONTROLS[name]
    monkeypatch.setattr(module, attr, buggy)
    net = NETS[name](2)
    assert mismatch(net.layer, random_case(net.layer)) > FAIL


# -- symbolic batch, parameters, sites ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(NETS))
def test_network_traces_at_a_symbolic_batch(name):
    (B,) = jax.export.symbolic_shape("B")
    net = NETS[name](B)
    assert disallowed(net.layer) == set()
    if net.sites:
        assert disallowed(net.layer, aux_none=net.sites) == set()


def test_parameter_lists():
    for name, build in NETS.items():
        net = build(4)
        names = [p.name for p in net.params]
        assert len(names) == len(set(names)), name
        for p in net.params:
            leaf = p.name.rsplit("/", 1)[-1]
            assert p.decay == leaf.startswith("W"), (name, p.name)   # no decay: biases, norms, tokens
        params = net.init(seed=7)
        assert all(params[p.name].shape == p.shape for p in net.params)
        again, other = net.init(seed=7), net.init(seed=8)
        assert all(np.array_equal(params[k], again[k]) for k in params)
        assert any(not np.array_equal(params[k], other[k]) for k in params)
    v = vit(4)
    assert {"embed/cls", "embed/pos", "block0/attn/Wq", "block3/mlp/fc2/W", "ln/g", "head/W"} <= set(v.layer.param_names)
    assert v.layer.params[[p.name for p in v.params].index("embed/pos")].shape == (17, 64)


def test_vit_sites_and_keep_ramp():
    net = vit(8)
    assert net.sites == tuple(f"block{i}/{s}" for i in range(4) for s in ("sA", "sM"))
    assert keep_ramp(4, 0.1) == pytest.approx([1.0, 1 - 0.1 / 3, 1 - 0.2 / 3, 0.9])
    assert net.keep["block0/sA"] == 1.0 and net.keep["block3/sM"] == pytest.approx(0.9)
    masks = net.sample_masks(jax.random.PRNGKey(0), 1000)
    last = np.asarray(masks["block3/sM"])
    assert np.all(np.isclose(last, 0.0) | np.isclose(last, 1 / 0.9)) and 0.85 < np.mean(last > 0) < 0.95
    assert np.all(np.asarray(masks["block0/sA"]) == 1.0)


def test_masks_none_is_evaluation_and_unknown_sites_are_refused():
    net = vit(2)
    params = net.init(0)
    x = np.zeros((2, 8, 8, 1), np.float32)
    ones = {s: np.ones(2, np.float32) for s in net.sites}
    fwd = jax.jit(net.forward)
    np.testing.assert_allclose(fwd(params, x, None), fwd(params, x, ones), atol=1e-6)
    with pytest.raises(ValueError, match="unknown drop-path site.*block9/sA"):
        net.forward(params, x, {"block9/sA": np.ones(2)})
