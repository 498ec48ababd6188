"""Drop-path gates: rate 0 renders the drop-free network's module; all-ones masks give
the drop-free forward bit for bit; zeroing one site's mask for one example removes
exactly that branch for that example (a misplaced site fails the gate)."""
import numpy as np
import pytest

from verigrad.nn import combinators as C
from verigrad.nn import layers as L
from verigrad.nn.nets import Network, vit
from verigrad.nn.nets.vit import keep_ramp, vit_block, vit_block_flat
from verigrad.render import render
from verigrad.run import backend, manifest

from render_nets import TINY_VIT

B = 4


def _vit(block, rate=0.1):
    """The tiny ViT with ``block(x) -> Layer`` as its blocks (as ``nets.vit`` builds it)."""
    embed = L.patch_embed((B, 8, 8, 1), 2, TINY_VIT["width"])
    parts, keep = [C.named("embed", embed)], {}
    for i, kp in enumerate(keep_ramp(TINY_VIT["depth"], rate)):
        layer = block(embed.y)
        parts.append(C.named(f"block{i}", layer))
        keep.update({f"block{i}/{s.name}": kp for s in layer.aux})
    token = L.take_token(embed.y)
    parts += [C.named("ln", L.layer_norm(embed.y)), token, C.named("head", L.dense(token.y, 10))]
    return Network("vit", C.chain(*parts), keep=keep)


def drop_free():
    return _vit(lambda x: vit_block(x, TINY_VIT["heads"], TINY_VIT["hidden"], sites=False))


def misplaced():
    """The seed's control: the sites applied after the skip adds."""
    return _vit(lambda x: vit_block_flat(x, TINY_VIT["heads"], TINY_VIT["hidden"], control="site_after_skip"))


@pytest.fixture(scope="module")
def rate_zero(tmp_path_factory):
    return render("vit", tmp_path_factory.mktemp("rate0"), batch=B, opt="momentum", drop_path=0.0,
                  options=TINY_VIT, tie=False)


def test_rate_zero_renders_the_drop_free_module(rate_zero, tmp_path):
    free = render(drop_free(), tmp_path, opt="momentum", drop_path=0.0, tie=False)
    for name in ("train_step.mlir", "forward.mlir"):
        assert (rate_zero / name).read_text() == (free / name).read_text(), name
    assert not manifest.load(rate_zero).train_step.role("drop_mask")


def _forward(directory, params, x, masks=None):
    m = manifest.load(directory)
    args = []
    for p in m.forward.inputs:
        if p.role == "param":
            args.append(params[p.name.removeprefix("params/")])
        elif p.role == "batch_x":
            args.append(x)
        else:
            args.append(masks[p.name.removeprefix("site/")])
    exe = backend.compile(m.text(m.forward), "xla", [p.name for p in m.forward.inputs])
    return backend.to_host(exe(*args)[0])


@pytest.fixture(scope="module")
def case():
    net = vit(B, drop_path_rate=0.1, **TINY_VIT)
    params = {k: np.asarray(v) for k, v in net.init(seed=3).items()}
    x = np.random.default_rng(0).random((B, 8, 8, 1)).astype(np.float32)
    return net, params, x


def test_all_ones_masks_give_the_drop_free_forward_bit_for_bit(vit_dir, rate_zero, case):
    net, params, x = case
    ones = {s: np.ones(B, np.float32) for s in net.sites}
    assert np.array_equal(_forward(vit_dir, params, x, ones), _forward(rate_zero, params, x))


def without_branch(net, params, x, site):
    """Logits of the drop-free ViT with the branch of ``site`` (``block1/sM``) removed,
    computed from the layers themselves (no masks)."""
    block, local = site.split("/")
    h = x
    for child in net.layer.children:
        inner = {k[len(child.name) + 1:]: v for k, v in params.items() if k.startswith(child.name + "/")}
        if child.name != block:
            aux = [None] * len(child.aux)
            h = child.forward(params, h, *aux)
            continue
        for residual in child.children[0].children:       # site_residual(branch, s), twice
            if residual.hyper["site"] != local:
                h = h + residual.children[0].forward(inner, h)
    return np.asarray(h)


def site_gate(directory, net, params, x, site, example=1):
    """(others unchanged bit for bit, the example equals its branch removed)."""
    ones = {s: np.ones(B, np.float32) for s in net.sites}
    zeroed = dict(ones)
    zeroed[site] = np.where(np.arange(B) == example, 0.0, 1.0).astype(np.float32)
    base, dropped = _forward(directory, params, x, ones), _forward(directory, params, x, zeroed)
    others = np.arange(B) != example
    expected = without_branch(net, params, x, site)
    assert not np.allclose(expected[example], base[example], atol=1e-4)   # the branch matters
    return (np.array_equal(dropped[others], base[others]),
            bool(np.allclose(dropped[example], expected[example], rtol=1e-4, atol=1e-5)))


@pytest.mark.parametrize("site", ["block0/sA", "block1/sM"])
def test_zeroing_one_site_removes_exactly_that_branch(vit_dir, case, site):
    net, params, x = case
    assert site_gate(vit_dir, net, params, x, site) == (True, True)


def test_a_misplaced_site_fails_the_gate(tmp_path, case):
    net, params, x = case
    directory = render(misplaced(), tmp_path, opt="momentum", drop_path=0.1, tie=False)
    others, branch = site_gate(directory, net, params, x, "block1/sM")
    assert others and not branch
