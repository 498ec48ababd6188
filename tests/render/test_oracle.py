"""The differential oracle: one step of every network, its certified gradient (the
loss's and the network's hand-written backwards, as the rendered step applies them)
against jax.value_and_grad of the same forward, in float32: every parameter within
1e-5 relative. A deliberately wrong backward must fail it (the control)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.nn import combinators as C
from verigrad.nn import layers as L
from verigrad.nn.layers.zoo import ZOO
from verigrad.nn.nets import Network, vit
from verigrad.nn.nets.vit import keep_ramp, vit_block_flat
from verigrad.render import autodiff as A, configure, step as S
from verigrad.run import data

TOLERANCE = 1e-5
# Compiled for one run: LLVM's expensive passes cost more than they save here.
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
FLOOR = 1e-3    # a gradient 1000x below the network's largest is compared at that scale


def batch(net, cfg, seed=0):
    """Digits, smoothed targets, random drop-path masks (bernoulli(keep) / keep)."""
    split, B = data.digits(), cfg.batch
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(split.x_train), B, replace=False)
    x = jnp.asarray(split.x_train[idx].reshape((B,) + tuple(net.layer.x[1:])))
    y = jnp.asarray(data.targets(split.y_train[idx], net.classes, cfg.label_smoothing))
    masks = {s: jnp.asarray((rng.random(B) < net.keep[s]) / net.keep[s], jnp.float32)
             for s in S.active_sites(net, cfg)}
    return x, y, masks


def gradient_errors(net, cfg, seed=0) -> dict:
    """Per parameter: max |certified - reference| / max(max |reference|, FLOOR * G),
    G the largest reference entry of any parameter; and the two losses."""
    params = net.init(seed)
    x, y, masks = batch(net, cfg, seed)
    both = jax.jit(lambda p, x, y, m: (S.loss_and_gradients(net, cfg)(p, x, y, m),
                                       A.reference_gradients(net, cfg)(p, x, y, m)))
    compiled = both.lower(params, x, y, masks).compile(compiler_options=FAST_COMPILE)
    (loss, grads), (ref_loss, ref) = compiled(params, x, y, masks)
    G = max(float(jnp.max(jnp.abs(r))) for r in ref.values())
    assert set(grads) == set(ref)
    errors = {k: float(jnp.max(jnp.abs(grads[k] - ref[k]))) / max(float(jnp.max(jnp.abs(ref[k]))), FLOOR * G)
              for k in ref}
    return errors, float(loss), float(ref_loss)


@pytest.mark.parametrize("name", ["mlp", "cnn", "resnet", "vit"])
def test_certified_gradient_matches_autodiff(name):
    net, cfg = configure(name, 8, drop_path=0.1, clip=None)
    errors, loss, ref_loss = gradient_errors(net, cfg)
    assert len(errors) == len(net.params)
    assert abs(loss - ref_loss) <= TOLERANCE * abs(ref_loss)
    worst = max(errors, key=errors.get)
    assert errors[worst] <= TOLERANCE, f"{worst}: relative error {errors[worst]:.3g}"


def test_clipped_gradient_matches_autodiff():
    net, cfg = configure("mlp", 8, clip=0.05)
    errors, _, _ = gradient_errors(net, cfg)
    assert max(errors.values()) <= TOLERANCE


def _mlp_with_head(head):
    parts = [L.flatten((8, 8, 8, 1))]
    parts += [C.named("fc1", L.dense(parts[-1].y, 32)), L.relu((8, 32)), C.named("head", head)]
    return Network("mlp", C.chain(*parts))


def _vit_with(control):
    """The ViT built from the flat blocks carrying one of the seed's bugs."""
    embed = L.patch_embed((8, 8, 8, 1), 2, 16)
    parts, keep = [C.named("embed", embed)], {}
    for i, kp in enumerate(keep_ramp(2, 0.3)):
        parts.append(C.named(f"block{i}", vit_block_flat(embed.y, 2, 32, control=control)))
        keep.update({f"block{i}/sA": kp, f"block{i}/sM": kp})
    token = L.take_token(embed.y)
    parts += [C.named("ln", L.layer_norm(embed.y)), token, C.named("head", L.dense(token.y, 10))]
    return Network("vit", C.chain(*parts), keep=keep)


def test_the_flat_vit_passes():
    """The flat block (the renderer's spelling of the block) without a bug passes."""
    net, cfg = configure(_vit_with(None), drop_path=0.3)
    errors, _, _ = gradient_errors(net, cfg, seed=1)
    assert max(errors.values()) <= TOLERANCE


@pytest.mark.parametrize("network, wrong", [
    (lambda: _mlp_with_head(ZOO["dense"].control(B=8, d=32, m=10)), {"head/b"}),
    (lambda: _vit_with("skip_reads_dropped"), {"block0/attn/Wq", "embed/W"}),
    (lambda: _vit_with("fc2_weight_raw"), {"block1/mlp/fc2/W"}),    # block 0 keeps everything
])
def test_a_wrong_backward_fails_the_oracle(network, wrong):
    """The control: a realistic bug in one layer's backward (the dense bias gradient
    averaged instead of summed; the seed's drop-path bugs) is caught, and named."""
    net, cfg = configure(network(), drop_path=0.3)
    errors, _, _ = gradient_errors(net, cfg, seed=1)
    failing = {k for k, e in errors.items() if e > TOLERANCE}
    assert wrong <= failing, (wrong, sorted(failing))
    assert min(errors[k] for k in wrong) > 100 * TOLERANCE
