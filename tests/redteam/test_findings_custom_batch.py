"""Red team RT-46-e1 and RT-46-e4 (rt2-e, fixed): a network file's certificate was about
another network than the one rendered, tied and trained.

RT-46-e1. ``network(...)`` certifies the network at a symbolic batch ``B``; ``render`` and
``train`` build it again at the concrete batch (``Model.build`` -> ``_layer_at``), which
calls each ``Custom(fn)``'s ``fn`` again. The docstring asks ``fn`` not to branch on the
batch size; nothing checked it, and the render tie ties the text to the JAX step of the
*concrete* network, not to the certified terms. So::

    def scaled(x):                                   # x = (B, 8) or (4, 8)
        good = not isinstance(x[0], int)             # symbolic while certifying
        forward:  x * g
        backward: dx = dy * g,  dg = (1 if good else 3) * sum_b dy x

    net = nb.network("bd", [nb.Dense(8), nb.Custom(scaled), nb.Head()], input=(8,), classes=3)
    render(net.py:net, batch=4, opt=sgd, certify=True)
      -> network_backward PROVED, loss_backward PROVED, render_tie CHECKED

and the tied step's ``custom0/g`` update was 3.000x the one ``jax.grad`` gives (the other
parameters agree exactly). A forward that changes with the batch (``2 x g`` concretely,
``x g`` certified; backward consistent with each) was likewise certified as one function
and trained as another.

Fix (``Model._same_customs``): every ``Custom`` piece built at a concrete batch is
certified at those sizes, and the kernel proves its forward equal to the certified one
with ``B := batch``; otherwise ``NetworkError`` names the piece.

RT-46-e4. A network file may define its network with ``certify=False`` ("only the shapes
are checked"). ``verigrad train FILE.py:NAME`` then rendered, tied and trained a ``Custom``
whose backward is wrong for every batch (``dg`` 3x): the manifest recorded
network_backward UNKNOWN, the command printed ``"render_tie": "CHECKED"`` and exit 0.
Fix: ``step.build_network`` certifies a file's network (``Model.certify``, cached) before
anything renders, ties or trains it.
"""
from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.nn import builder as nb
from verigrad.render import configure
from verigrad.render import step as S
from verigrad.render.autodiff import reference_step

LAYER = '''
from verigrad.nn import builder as nb, combinators as C, layers as L
import jax.numpy as jnp

def scaled(x):
    concrete = isinstance(x[0], int)
    k = {k}
    f = {f}
    def forward(params, x):
        return f * x * params["g"]
    def backward(params, x, dy):
        return f * dy * params["g"], {{"g": k * f * jnp.sum(dy * x, axis=0)}}
    return L.Layer("scaled", tuple(x), tuple(x), forward, backward,
                   params=(L.ParamSpec("g", (x[-1],), L.ones()),))

def tree(x):
    return C.residual(C.chain(L.dense(x, x[-1]), L.relu(x)))

net = nb.network("bd", [nb.Dense(8), nb.Custom(scaled), nb.Custom(tree), nb.Head()], input=(8,), classes=3,
                 certify={certify})
'''


def _file(tmp_path, name, k="1.0", f="1.0", certify=True):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(LAYER.format(k=k, f=f, certify=certify)))
    return f"{path}:net"


def _step_ratio(net, cfg):
    """Per parameter, the tied step's update over jax.grad's (sgd, lr 1)."""
    lay = S.layout(net, cfg)
    rng = np.random.default_rng(0)
    args = [jnp.asarray(rng.standard_normal(p["shape"]), jnp.float32) for p in lay.step_inputs]
    args[-1] = jnp.float32(1.0)
    got = jax.jit(S.train_step(net, cfg, lay))(*args)
    want = jax.jit(reference_step(net, cfg, lay))(*args)
    out = {}
    for p, a, b, p0 in zip(lay.step_outputs, got, want, args):
        if p["role"] == "param":
            du, dv = np.asarray(p0) - np.asarray(a), np.asarray(p0) - np.asarray(b)
            out[p["name"]] = float(np.sum(du * dv) / np.sum(dv * dv))
    return out


def test_rt46_e1_a_batch_branching_backward_is_refused(tmp_path):
    spec = _file(tmp_path, "backward", k="3.0 if concrete else 1.0")
    nb.load(spec)                          # certified at the symbolic batch: its fn is right there
    with pytest.raises(nb.NetworkError, match=r"piece 1 \(Custom\(scaled\)\) has no certificate at batch 4"):
        configure(spec, batch=4, opt="sgd")


def test_rt46_e1_a_batch_branching_forward_is_refused(tmp_path):
    spec = _file(tmp_path, "forward", f="2.0 if concrete else 1.0")
    nb.load(spec)
    with pytest.raises(nb.NetworkError, match=r"piece 1 \(Custom\(scaled\)\) computes another forward at batch 4"):
        configure(spec, batch=4, opt="sgd")


def test_rt46_e1_custom_pieces_that_do_not_branch_train_on_the_true_gradient(tmp_path):
    net, cfg = configure(_file(tmp_path, "good"), batch=4, opt="sgd", drop_path=0.0)
    ratios = _step_ratio(net, cfg)
    assert set(ratios) >= {"params/custom0/g", "params/custom1/W", "params/head/W"}
    assert all(abs(r - 1.0) < 1e-5 for r in ratios.values()), ratios


def test_rt46_e4_an_uncertified_file_network_is_not_rendered(tmp_path):
    spec = _file(tmp_path, "nocert", k="3.0", certify=False)
    model = nb.load(spec)
    assert model.certificate is None       # certify=False: only the shapes were checked
    with pytest.raises(nb.NetworkError, match=r"Custom\(scaled\), custom0\) has no certificate"):
        configure(spec, batch=4, opt="sgd")


def test_rt46_e4_a_true_network_defined_with_certify_false_is_certified_when_rendered(tmp_path):
    spec = _file(tmp_path, "later", certify=False)
    net, cfg = configure(spec, batch=4, opt="sgd", drop_path=0.0)
    assert nb.load(spec).certificate.proved
    assert all(abs(r - 1.0) < 1e-5 for r in _step_ratio(net, cfg).values())


def test_rt46_e1_the_attack_still_builds_a_wrong_layer_at_a_concrete_batch(tmp_path):
    """The ingredient the fix guards: at batch 4 the file's fn does give the 3x backward
    (so the refusal above is of a real error, not of every Custom)."""
    from verigrad.nn.nets.network import Network
    spec = _file(tmp_path, "ingredient", k="3.0 if concrete else 1.0")
    model = nb.load(spec)
    assert model.certificate.proved                 # at the symbolic batch
    layer = model._layer_at(4)[0]                   # what build(4) made before the check
    _, cfg = configure(_file(tmp_path, "good2"), batch=4, opt="sgd", drop_path=0.0)
    ratios = _step_ratio(Network(model.name, layer, classes=3), cfg)
    assert abs(ratios["params/custom0/g"] - 3.0) < 1e-4 and abs(ratios["params/head/W"] - 1.0) < 1e-5, ratios
