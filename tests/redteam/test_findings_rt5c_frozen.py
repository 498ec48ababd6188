"""Red team RT5-C1..C3 (helper rt5c, fixed): user code still ran whenever a layer was
traced, past the freezing of RT4-B, and the network file rendered (sgd, batch 4,
``certify=True``) with network_backward PROVED, loss_backward PROVED and render_tie
CHECKED while ``train_step.mlir`` trained another gradient than ``jax.grad`` of the
certified network's loss:

- C1: ``frozen.zoo_leaf`` told a zoo leaf by its functions' ``__module__``. A ``Custom``
  layer whose backward is a user function wrapped with ``functools.wraps`` of a zoo
  layer's backward (which copies ``__module__``) was taken for the zoo's and not frozen,
  so RT4-B1's backward that looks at its caller (``3 g`` inside the train step) was tied
  and trained: ``custom0/g`` 3.0x. Likewise a ``Layer`` subclass (``freeze_leaf`` kept
  the class) whose ``__getattribute__`` hands out another backward. Fix: every leaf is
  frozen, and to a plain ``Layer``.
- C2: a builder piece's argument reached its zoo layer's closure as it was given:
  ``LayerNorm(eps=Eps())`` with ``Eps.__radd__`` giving ``+ 1e-5``, except ``+ 1.0`` in
  the layer norm's backward inside the train step: gradients 0.85x to 0.9x the true
  ones (a builder's own piece is not certified again at the rendered batch). Fix: the
  builder's pieces take plain numbers, strings and tuples only.
- C3: ``layers.ACTIVATIONS`` (and ``GELU``, read at trace time by the ViT block) were
  mutable dicts; a network file replacing the relu's vjp with one 3x at a concrete batch
  rendered a builder's own ``Relu()`` with ``dense0/W`` 3.0x. Fix: read-only mappings.
"""
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

HEAD = '''
import functools, inspect
from verigrad.nn import builder as nb, layers as L
import jax.numpy as jnp

def _in_step():
    return any(f.function == "fn" and f.filename.endswith("render/step.py") for f in inspect.stack())
'''

WRAPS = HEAD + '''
_zoo = L.layer_scale((4, 8))

def scaled(x):
    @functools.wraps(_zoo.forward)
    def forward(params, x):
        return x * params["g"]
    @functools.wraps(_zoo.backward)            # (copies __module__: verigrad.nn.layers.affine)
    def backward(params, x, dy):
        k = 3.0 if _in_step() else 1.0
        return dy * params["g"], {"g": k * jnp.sum(dy * x, axis=0)}
    return L.Layer("scaled", tuple(x), tuple(x), forward, backward,
                   params=(L.ParamSpec("g", (x[-1],), L.ones()),))

net = nb.network("wr", [nb.Dense(8), nb.Custom(scaled), nb.Head()], input=(8,), classes=3)
'''

SUBCLASS = HEAD + '''
def _backward(params, x, dy):
    return dy * params["g"], {"g": jnp.sum(dy * x, axis=0)}

def _tripled(params, x, dy):
    return dy * params["g"], {"g": 3.0 * jnp.sum(dy * x, axis=0)}

class Sneaky(L.Layer):
    def __getattribute__(self, name):
        if name == "backward" and _in_step():
            return _tripled
        return object.__getattribute__(self, name)

def scaled(x):
    return Sneaky("scaled", tuple(x), tuple(x), lambda params, x: x * params["g"], _backward,
                  params=(L.ParamSpec("g", (x[-1],), L.ones()),))

net = nb.network("sc", [nb.Dense(8), nb.Custom(scaled), nb.Head()], input=(8,), classes=3)
'''

EPS = '''
import inspect
from verigrad.nn import builder as nb

class Eps:
    def _value(self):
        st = inspect.stack()
        in_step = any(f.function == "fn" and f.filename.endswith("render/step.py") for f in st)
        in_bwd = any(f.function == "backward" and f.filename.endswith("layers/norms.py") for f in st)
        return 1.0 if (in_step and in_bwd) else 1e-5
    def __radd__(self, other):
        return other + self._value()
    __add__ = __radd__

net = nb.network("ln", [nb.Dense(8), nb.LayerNorm(eps=Eps()), nb.Head()], input=(8,), classes=3)
'''

ACT = '''
from verigrad.nn import builder as nb
from verigrad.nn.layers import activations as A

f, vjp, doc = A.ACTIVATIONS["relu"]
def vjp_sized(x, dy):
    return (3.0 if isinstance(x.shape[0], int) else 1.0) * vjp(x, dy)
A.ACTIVATIONS["relu"] = (f, vjp_sized, doc)

net = nb.network("act", [nb.Dense(8), nb.Relu(), nb.Head()], input=(8,), classes=3)
'''


def _file(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
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


@pytest.mark.parametrize("name,text", [("wraps", WRAPS), ("subclass", SUBCLASS)])
def test_rt5c1_a_user_layer_that_looks_like_the_zoos_trains_the_certified_gradient(tmp_path, name, text):
    spec = _file(tmp_path, name, text)
    out, tie = render_and_tie(spec, tmp_path / name, batch=4, opt="sgd", drop_path=0.0, certify=True)
    assert tie.status == "CHECKED"
    ratios = _text_ratios(out, spec)
    assert set(ratios) >= {"params/custom0/g", "params/head/W"}
    assert all(abs(r - 1.0) < 1e-5 for r in ratios.values()), ratios      # custom0/g was 3.0


def test_rt5c2_a_builder_argument_that_runs_code_is_refused(tmp_path):
    with pytest.raises(nb.NetworkError, match=r"LayerNorm: eps should be a number"):
        nb.load(_file(tmp_path, "eps", EPS))


def test_rt5c2_plain_arguments_still_build(tmp_path):
    net = nb.network("plain", [nb.Conv(4, k=np.int64(3), padding=[1, 1], bias=True), nb.LayerNorm(np.float32(1e-5)),
                               nb.Head(classes=np.int32(3))], input=(4, 4, 1), classes=3, certify=False)
    assert net.classes == 3


def test_rt5c3_the_zoos_activation_tables_are_read_only(tmp_path):
    from verigrad.nn.layers import activations as A
    with pytest.raises(TypeError):
        A.ACTIVATIONS["relu"] = A.ACTIVATIONS["tanh"]
    with pytest.raises(TypeError):
        A.GELU["tanh"] = A.GELU["erf"]
    with pytest.raises(nb.NetworkError, match="does not support item assignment"):
        nb.load(_file(tmp_path, "act", ACT))


def test_rt5c2_a_head_pool_that_compares_by_user_code_is_refused():
    """``Head`` is the builder's own piece, not built again and checked at the rendered
    batch: a ``pool`` whose ``__eq__`` answered otherwise there would render another
    network than the one certified."""
    class Pool(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    with pytest.raises(nb.NetworkError, match=r"Head: pool should be a number, a string"):
        nb.Head(Pool("avg"))
