"""Red team RT4-B1..B5 (helper rt4-b, fixed): a user's layer code was traced again at every
stage, and what one trace was certified as was not what another was tied and trained as.

A ``Custom`` piece's forward and backward are Python functions. Certification traces them
alone (symbolic batch, float64); ``Model._same_customs`` traced the piece again at the
rendered batch and the *symbolic* piece again; emission and the render tie trace them once
more, inside the train step, in float32. The tie ties the text to its own trace of the
step, so the text was CHECKED against whatever the functions did that time. Each attack
below renders (``render_and_tie``, sgd, batch 4, ``certify=True``) with network_backward
PROVED, loss_backward PROVED and render_tie CHECKED, while ``train_step.mlir`` gives
``custom0/g`` 3x the update of the certified network (``jax.grad`` or numpy of it):

- B1, context: ``k = 3 if "render/step.py" frames are on inspect.stack() else 1`` in the
  backward (a call counter, a cache or any other state does as well);
- B2, a ``Module`` subclass (``Module`` is public) whose ``layer`` branches on the batch:
  RT-46-e1's check covered ``Custom`` pieces only;
- B3, ``k = 3 if dy.dtype == float32 else 1`` under ``JAX_ENABLE_X64=1`` (where the x64
  guard of RT-38 is off, as the error message of that guard recommends);
- B4, ``k = 3 if s is None else 1``: a drop-path site absent (rate 0), a call no
  certification makes (sites are certified as inputs);
- B5, the symbolic piece traced differently inside ``_same_customs`` (2 x g, as its
  concrete layer) than in the network's certification (x g): the check passed, the text
  trained the 2 x g network (max |text - numpy of the certified network| 3.7 on head/W);
  the manifest's network_backward came from yet another trace (``certify_pieces`` built a
  fresh symbolic network).

Fix. ``verigrad.nn.frozen``: at the rendered batch every non-zoo leaf is traced once, in
float32 (x64 off) and float64 (x64 on), refused unless both are one program, and replaced
by a layer that evaluates those programs (an absent site is ``s = 1``); the nodes above are
made again by their combinators. ``Model.build`` freezes before ``_same_customs`` certifies
the frozen piece, so emission and the tie see the program certified. Every piece that is
not the builder's own (B2) is checked as a ``Custom``. ``_same_customs`` compares with the
piece's certificate from the network's own run (``compose.certify(keep=...)``), and
``certify_pieces`` reports that same certificate for a network file (B5). A ``Network``
object given to ``render`` is frozen too (``configure``).
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.nn import builder as nb
from verigrad.render import configure, render_and_tie
from verigrad.render import step as S
from verigrad.render.autodiff import reference_step
from verigrad.run import backend, manifest as M

ROOT = Path(__file__).resolve().parents[2]

HEAD = '''
import inspect
from verigrad.nn import builder as nb, layers as L
from verigrad.nn.layers.core import AuxSpec, scale_examples
import jax.numpy as jnp
'''

CONTEXT = HEAD + '''
def _in_step():
    return any(f.function == "fn" and f.filename.endswith("render/step.py") for f in inspect.stack())

def scaled(x):
    def forward(params, x):
        return x * params["g"]
    def backward(params, x, dy):
        k = {k}
        return dy * params["g"], {{"g": k * jnp.sum(dy * x, axis=0)}}
    return L.Layer("scaled", tuple(x), tuple(x), forward, backward,
                   params=(L.ParamSpec("g", (x[-1],), L.ones()),))

net = nb.network("st", [nb.Dense(8), nb.Custom(scaled), nb.Head()], input=(8,), classes=3)
'''

SUBCLASS = HEAD + '''
class Scaled(nb.Module):
    kind = "custom"
    def layer(self, x, ctx):
        k = {k}
        def forward(params, x):
            return x * params["g"]
        def backward(params, x, dy):
            return dy * params["g"], {{"g": k * jnp.sum(dy * x, axis=0)}}
        return L.Layer("scaled", tuple(x), tuple(x), forward, backward,
                       params=(L.ParamSpec("g", (x[-1],), L.ones()),))

net = nb.network("sub", [nb.Dense(8), Scaled(), nb.Head()], input=(8,), classes=3)
'''

ABSENT = HEAD + '''
def gated(x):
    def forward(params, x, s):
        return scale_examples(s, x * params["g"])
    def backward(params, x, s, dy):
        k = {k}
        dys = scale_examples(s, dy)
        return dys * params["g"], {{"g": k * jnp.sum(dys * x, axis=0)}}
    return L.Layer("gated", tuple(x), tuple(x), forward, backward,
                   params=(L.ParamSpec("g", (x[-1],), L.ones()),),
                   aux=(AuxSpec("s", (x[0],), optional=True),))

net = nb.network("ab", [nb.Dense(8), nb.Custom(gated), nb.Head()], input=(8,), classes=3)
'''

RESYM = HEAD + '''
def scaled(x):
    concrete = isinstance(x[0], int)
    def factor():
        if concrete:
            return 2.0
        return {again} if any(f.function == "_same_customs" for f in inspect.stack()) else 1.0
    def forward(params, x):
        return factor() * x * params["g"]
    def backward(params, x, dy):
        c = factor()
        return c * dy * params["g"], {{"g": c * jnp.sum(dy * x, axis=0)}}
    return L.Layer("scaled", tuple(x), tuple(x), forward, backward,
                   params=(L.ParamSpec("g", (x[-1],), L.ones()),))

net = nb.network("rs", [nb.Dense(8), nb.Custom(scaled), nb.Head()], input=(8,), classes=3)
'''


def _file(tmp_path, name, template, **kw):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(template.format(**kw)))
    return f"{path}:net"


def _text_ratios(directory, spec):
    """Per parameter, the rendered text's sgd update (lr 1) over jax.grad's of the network."""
    m = M.load(Path(directory) / "manifest.json")
    exe = backend.compile(m.text(m.train_step))
    net, cfg = configure(spec, batch=4, opt="sgd", drop_path=0.0)
    lay = S.layout(net, cfg)
    rng = np.random.default_rng(0)
    args = [np.asarray(rng.standard_normal(p["shape"]), np.float32) for p in lay.step_inputs]
    args[-1] = np.float32(1.0)
    got = [np.asarray(backend.to_host(a)) for a in exe(*args)]
    want = jax.jit(reference_step(net, cfg, lay))(*[jnp.asarray(a) for a in args])
    out = {}
    for p, a, b, p0 in zip(lay.step_outputs, got, want, args):
        if p["role"] == "param":
            du, dv = p0 - a, p0 - np.asarray(b)
            out[p["name"]] = float(np.sum(du * dv) / np.sum(dv * dv))
    return out


def _rendered(tmp_path, spec, name):
    out, tie = render_and_tie(spec, tmp_path / name, batch=4, opt="sgd", drop_path=0.0, certify=True)
    return out, tie


def test_rt4_b1_a_backward_that_looks_at_its_caller_trains_the_certified_gradient(tmp_path):
    spec = _file(tmp_path, "context", CONTEXT, k="3.0 if _in_step() else 1.0")
    out, tie = _rendered(tmp_path, spec, "context")
    assert tie.status == "CHECKED"
    ratios = _text_ratios(out, spec)
    assert abs(ratios["params/custom0/g"] - 1.0) < 1e-5, ratios      # was 3.0
    assert all(abs(r - 1.0) < 1e-5 for r in ratios.values()), ratios


def test_rt4_b1_the_ingredient_the_function_does_differ_inside_the_step(tmp_path):
    """The attack's function really gives 3x when called inside the step (unfrozen)."""
    from verigrad.nn.nets.network import Network
    spec = _file(tmp_path, "ingredient", CONTEXT, k="3.0 if _in_step() else 1.0")
    model = nb.load(spec)
    net = Network(model.name, model._layer_at(4)[0], classes=3)       # what build(4) gave before
    cfg = configure(spec, batch=4, opt="sgd", drop_path=0.0)[1]
    lay = S.layout(net, cfg)
    rng = np.random.default_rng(0)
    args = [jnp.asarray(rng.standard_normal(p["shape"]), jnp.float32) for p in lay.step_inputs]
    args[-1] = jnp.float32(1.0)
    got = jax.jit(S.train_step(net, cfg, lay))(*args)
    want = jax.jit(reference_step(net, cfg, lay))(*args)
    k = [p["name"] for p in lay.step_outputs].index("params/custom0/g")
    du, dv = np.asarray(args[k]) - np.asarray(got[k]), np.asarray(args[k]) - np.asarray(want[k])
    assert abs(float(np.sum(du * dv) / np.sum(dv * dv)) - 3.0) < 1e-4


def test_rt4_b1_a_network_object_with_such_a_layer_trains_the_certified_gradient(tmp_path):
    import importlib.util
    from verigrad.nn import combinators as C, layers as L
    from verigrad.nn.nets.network import Network
    path = Path(_file(tmp_path, "obj", CONTEXT, k="3.0 if _in_step() else 1.0").rsplit(":", 1)[0])
    spec = importlib.util.spec_from_file_location("rt4b_obj", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = (4, 8)
    net = Network("obj", C.chain(C.named("dense0", L.dense(x, 8)), C.named("custom0", mod.scaled(x)),
                                 C.named("head", L.dense(x, 3))), classes=3)
    out, tie = render_and_tie(net, tmp_path / "objout", opt="sgd", drop_path=0.0, certify=True)
    assert tie.status == "CHECKED"
    m = M.load(out / "manifest.json")
    exe = backend.compile(m.text(m.train_step))
    frozen_net, cfg = configure(net, opt="sgd", drop_path=0.0)
    lay = S.layout(frozen_net, cfg)
    rng = np.random.default_rng(0)
    args = [np.asarray(rng.standard_normal(p["shape"]), np.float32) for p in lay.step_inputs]
    args[-1] = np.float32(1.0)
    got = [np.asarray(backend.to_host(a)) for a in exe(*args)]
    want = jax.jit(reference_step(net, cfg, lay))(*[jnp.asarray(a) for a in args])
    for p, a, b in zip(lay.step_outputs, got, want):
        if p["role"] == "param":
            assert np.abs(a - np.asarray(b)).max() < 1e-5, p["name"]


def test_rt4_b2_a_module_subclass_that_branches_on_the_batch_is_refused(tmp_path):
    spec = _file(tmp_path, "sub", SUBCLASS, k="3.0 if isinstance(x[0], int) else 1.0")
    with pytest.raises(nb.NetworkError, match=r"piece 1 \(Scaled\(\)\) has no certificate at batch 4"):
        configure(spec, batch=4, opt="sgd")


def test_rt4_b2_an_honest_module_subclass_still_renders_and_trains_the_true_gradient(tmp_path):
    spec = _file(tmp_path, "subok", SUBCLASS, k="1.0")
    out, tie = _rendered(tmp_path, spec, "subok")
    assert tie.status == "CHECKED"
    assert all(abs(r - 1.0) < 1e-5 for r in _text_ratios(out, spec).values())


def test_rt4_b3_a_backward_that_reads_its_dtype_is_refused_with_x64_on(tmp_path):
    spec = _file(tmp_path, "dtype", CONTEXT, k="3.0 if dy.dtype == jnp.float32 else 1.0")
    code = ("from verigrad.render import configure\n"
            f"configure({spec!r}, batch=4, opt='sgd')\n")
    env = {**os.environ, "JAX_ENABLE_X64": "1", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode != 0
    assert "another program in float32, where the step runs, than in float64" in r.stderr, r.stderr[-2000:]


def test_rt4_b4_a_backward_that_branches_on_an_absent_site_trains_the_certified_gradient(tmp_path):
    spec = _file(tmp_path, "absent", ABSENT, k="3.0 if s is None else 1.0")
    out, tie = _rendered(tmp_path, spec, "absent")
    assert tie.status == "CHECKED"
    ratios = _text_ratios(out, spec)
    assert all(abs(r - 1.0) < 1e-5 for r in ratios.values()), ratios     # custom0/g was 3.0


def test_rt4_b5_a_symbolic_piece_that_traces_differently_the_second_time_is_refused(tmp_path):
    spec = _file(tmp_path, "resym", RESYM, again="2.0")
    with pytest.raises(nb.NetworkError, match=r"piece 1 \(Custom\(scaled\)\) computes another forward at batch 4"):
        configure(spec, batch=4, opt="sgd")


def test_rt4_b5_the_manifest_states_the_certificate_the_pieces_were_checked_against(tmp_path, monkeypatch):
    """``certify_pieces`` of a network file reports the model's own certificate: the file's
    functions are not built and traced again for it."""
    from verigrad.render.pieces import certify_pieces
    counted = HEAD + """
import os
def scaled(x):
    os.environ["RT4B_CALLS"] = str(int(os.environ.get("RT4B_CALLS", "0")) + 1)
    def forward(params, x):
        return x * params["g"]
    def backward(params, x, dy):
        return dy * params["g"], {"g": jnp.sum(dy * x, axis=0)}
    return L.Layer("scaled", tuple(x), tuple(x), forward, backward,
                   params=(L.ParamSpec("g", (x[-1],), L.ones()),))

net = nb.network("cnt", [nb.Dense(8), nb.Custom(scaled), nb.Head()], input=(8,), classes=3)
"""
    path = tmp_path / "counted.py"
    path.write_text(textwrap.dedent(counted))
    monkeypatch.setenv("RT4B_CALLS", "0")
    net, cfg = configure(f"{path}:net", batch=4, opt="sgd", drop_path=0.0)
    before = int(os.environ["RT4B_CALLS"])            # the symbolic build, and the one at batch 4
    entry = certify_pieces(net, cfg)["network_backward"]
    assert entry["status"] == "PROVED"
    assert int(os.environ["RT4B_CALLS"]) == before == 2
