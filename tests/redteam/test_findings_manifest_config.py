"""Red team RT-46-e2 and RT-46-e3 (rt2-e, fixed): the training configuration a rendered
directory states was not the one tied.

RT-46-e2. ``tie_directory`` rebuilds the step from the manifest's ``render`` entry and
compared the layout's port names and shapes only; the trainer feeds the text from the
manifest's *other* fields: AdamW's bias corrections ``1 - beta^t`` from
``optimizer.betas``, the smoothed targets from ``label_smoothing``, each drop mask
``bernoulli(keep) / keep`` from its port's ``keep``, the initial values from
``params[].init``. The manifest is not hashed, so an edit of any of these (no sha256 to
update) was tied (``ensure_tied``: CHECKED) and trained. With ``optimizer.betas`` set to
``[0.5, 0.5]`` (a rendered adamw step of a small residual MLP, batch 4) the trainer fed
``bc1 = bc2 = 0.5`` at step 1 instead of 0.1 and 0.001, and every parameter's first update
was 4.47x (sqrt 20) the AdamW update of the rendered betas, against ``jax.grad`` and a
numpy AdamW (max |diff| 0.035 at lr 0.01).

Fix (``tie._configuration_differs``): the tie refuses a manifest whose batch, optimizer,
label smoothing, drop-path rate, ports (role, shape, dtype, keep) or parameter list (shape,
init, decay) differ from the step it rebuilt from ``render``.

RT-46-e3. ``hyperparameters("momentum", nesterov=False)`` was accepted and written to the
manifest, but ``optimizers._momentum`` computes Nesterov's update whatever the entry says
(1.9x heavy-ball's first step at momentum 0.9): ``render(..., opt="momentum",
nesterov=False)`` was tied and trained as Nesterov with the manifest saying otherwise.
Fix: ``nesterov`` other than True is refused, at render and in a manifest's ``render``
entry.
"""
from __future__ import annotations

import copy
import json
import shutil
import textwrap

import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.render import hyperparameters, render
from verigrad.render.optimizers import OPTIMIZERS
from verigrad.render.tie import NotTied, ensure_tied

NET = '''
from verigrad.nn import builder as nb
net = nb.network("sm", [nb.Dense(8), nb.Relu(), nb.Residual(nb.Dense(8), drop_path=True), nb.Head()],
                 input=(6,), classes=3)
'''


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    root = tmp_path_factory.mktemp("rt46e2")
    (root / "net.py").write_text(textwrap.dedent(NET))
    spec = f"{root / 'net.py'}:net"
    out = render(spec, root / "out", batch=4, opt="adamw", drop_path=0.1)
    return spec, out


def _edited(rendered, tmp_path, edit):
    _, out = rendered
    d = tmp_path / "edited"
    shutil.copytree(out, d)
    m = json.loads((d / "manifest.json").read_text())
    edit(m)
    (d / "manifest.json").write_text(json.dumps(m))
    return d


def _first_update(directory, spec):
    """The trainer's first AdamW step on ``directory`` and the step of a numpy AdamW of the
    rendered betas (0.9, 0.999) on ``jax.grad``'s gradient, per parameter."""
    from verigrad.render import configure
    from verigrad.render.autodiff import reference_gradients
    from verigrad.run import data, dataset, train
    m = ensure_tied(directory)
    rng0 = np.random.default_rng(0)
    x, y = rng0.standard_normal((16, 6)).astype(np.float32), rng0.integers(0, 3, 16)
    tr = train.Trainer(m, train.Config(epochs=1, lr=1e-2, schedule="constant"), progress=False,
                       data=dataset.Arrays(x, y, x, y))
    rng = np.random.default_rng(1)
    arrays = tr._initial(rng)
    args = tr._arguments(tr._to_device(arrays), x[:4], data.targets(y[:4], 3, 0.1), rng, 1e-2, 1)
    outs = tr.step_exe(*args)
    net, cfg = configure(spec, batch=4, opt="adamw", drop_path=0.1)
    params = {p.name[len("params/"):]: np.asarray(arrays[p.name]) for p in m.params}
    masks = {p.name[len("site/"):]: jnp.asarray(a) for p, a in zip(m.train_step.inputs, args) if p.role == "drop_mask"}
    _, g = reference_gradients(net, cfg)({k: jnp.asarray(v) for k, v in params.items()}, jnp.asarray(x[:4]),
                                         jnp.asarray(data.targets(y[:4], 3, 0.1)), masks)
    got, want = {}, {}
    for k, p in enumerate(m.train_step.outputs):
        if p.role == "param":
            n = p.name[len("params/"):]
            gg, p0 = np.asarray(g[n], np.float64), params[n].astype(np.float64)
            wd = 0.05 if n in net.decayed else 0.0
            want[n] = -1e-2 * (gg / (np.abs(gg) + 1e-8) + wd * p0)     # m/c1 = g, sqrt(v/c2) = |g| at t = 1
            got[n] = np.asarray(outs[k], np.float64) - p0
    return got, want


def test_rt46_e2_the_rendered_directory_trains_the_rendered_adamw(rendered):
    got, want = _first_update(rendered[1], rendered[0])
    for n in want:
        assert np.allclose(got[n], want[n], rtol=1e-3, atol=1e-6), n


EDITS = {
    "betas": lambda m: m["optimizer"].update(betas=[0.5, 0.5]),
    "label_smoothing": lambda m: m.update(label_smoothing=0.6),
    "keep": lambda m: [p.update(keep=0.5) for p in m["train_step"]["inputs"] if p["role"] == "drop_mask"],
    "init": lambda m: m["params"][0].update(init="zeros"),
    "decay": lambda m: m["params"][1].update(decay=True),
    "forward_keep": lambda m: m["forward"]["inputs"][-1].update(keep=0.5),
}


@pytest.mark.parametrize("what", sorted(EDITS))
def test_rt46_e2_an_edited_training_configuration_is_not_tied(rendered, tmp_path, what):
    edited = _edited(rendered, tmp_path, EDITS[what])
    with pytest.raises(NotTied, match="manifest.json: "):
        ensure_tied(edited)


def test_rt46_e2_the_edited_betas_would_train_another_update(rendered, tmp_path):
    """What the refusal prevents: the trainer reads the manifest's betas for the bias
    corrections, so the first step is sqrt(20) = 4.47x the rendered AdamW's."""
    from verigrad.run.manifest import load
    m = load(_edited(rendered, tmp_path, EDITS["betas"]))
    b1, b2 = m.optimizer["betas"]
    c1, c2 = 1 - b1, 1 - b2                          # what the trainer feeds at t = 1
    g = 0.3
    step = ((1 - 0.9) * g / c1) / (np.sqrt((1 - 0.999) * g * g / c2) + 1e-8)   # the text's moments
    assert abs(step / np.sign(g) - np.sqrt(20)) < 1e-3


def test_rt46_e2_the_render_entry_itself_must_be_a_complete_optimizer(rendered, tmp_path):
    def both(m):
        m["optimizer"]["amsgrad"] = True
        m["render"]["optimizer"]["amsgrad"] = True
    with pytest.raises(NotTied, match="amsgrad"):
        ensure_tied(_edited(rendered, tmp_path, both))


def test_rt46_e3_heavy_ball_momentum_is_not_named_when_nesterov_is_computed(tmp_path):
    with pytest.raises(ValueError, match="only Nesterov momentum"):
        hyperparameters("momentum", nesterov=False)
    (tmp_path / "net.py").write_text(textwrap.dedent(NET))
    with pytest.raises(ValueError, match="only Nesterov momentum"):
        render(f"{tmp_path / 'net.py'}:net", tmp_path / "out", batch=4, opt="momentum", nesterov=False)
    # what is computed: Nesterov's first step, (1 + mu) g from u = 0 (heavy-ball's is g)
    opt = hyperparameters("momentum", nesterov=True)
    p, (u,) = OPTIMIZERS["momentum"].update(jnp.float32(0.0), jnp.float32(1.0), (jnp.float32(0.0),), 1.0, 0.0,
                                            None, opt)
    assert abs(float(p) + 1.9) < 1e-6 and abs(float(u) - 1.0) < 1e-6
    assert copy.deepcopy(opt) == {"name": "momentum", "momentum": 0.9, "nesterov": True, "weight_decay": 0.0}
