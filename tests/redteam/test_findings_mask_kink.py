"""Red team RT-30 (fixed: the tie rests on no side condition): the tie accepted a kink
of the math whose exception set is null as a function of its inputs treated as reals,
but a drop-path mask is an input that training draws from ``{0, 1/keep}``
(``keep_mask``): a kink argument that the math multiplies by the mask, ``u = s[b] * h[b,
j]`` (a ``DropPath`` followed by a ``Relu``), is real-analytic in the inputs and not
identically zero, yet ``u = 0`` for the whole example ``b`` on every step that drops it.

Network (builder): ``Dense(16), DropPath(), Relu(), Dense(10, name="head")`` on ``(64,)``,
rendered with batch 2, sgd, ``drop_path=0.5``. Edit, before the return (the relu's
argument is ``%5 = multiply(broadcast(s), x W + b)``):

    %rt9 = head/b' + [u[0, 0] == 0] * [1, 0, ..., 0]

with the manifest's sha256 updated. ``ensure_tied`` accepted it: ``params/head/b`` CHECKED
under ``s5[0, 0] != 0 (off the kink)``. XLA then adds 1 to ``head/b[0]`` whenever example
0 is dropped (``s[0] = 0``), half the steps here, 10% at the default rate.

Fix: "except on a set of measure zero" says nothing of what training feeds (zeros at
initialization, labels, masks), so a result the kernel proves only under a side
condition is UNKNOWN; the importers read both programs alike, and the nets tie with no
side condition at all.

Since RT15 that network is refused before it is rendered: its relu's side condition fails
for the whole of every dropped example, so the composed certificate is not shown for
almost every input (``test_the_original_network_is_refused``). The tie is tested on its
neighbour ``Dense(16), DropPath(), Dense(16, name="mid"), Relu(), Dense(10, name="head")``,
which is certified (its relu's argument ``(s[b] h[b]) W' + b'`` is shifted by ``b'``), yet
the argument ``u[0, 0]`` is ``b'[0]`` on every step that drops example 0: exactly 0 while
``mid/b`` keeps its zero initialization. The edit reads ``u = %9``.
"""
import json

import numpy as np
import pytest
from _tie_edits import edited_head_bias, run_step, step_args

from verigrad.nn.builder import NetworkError
from verigrad.render import render
from verigrad.render.tie import NotTied, ensure_tied

ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)

ORIGINAL = '''from verigrad.nn import builder as nb

net = nb.network("dp_relu", [nb.Dense(16), nb.DropPath(), nb.Relu(), nb.Dense(10, name="head")],
                 input=(64,), classes=10)
'''

NET = '''from verigrad.nn import builder as nb

net = nb.network("dp_mid_relu", [nb.Dense(16), nb.DropPath(), nb.Dense(16, name="mid"), nb.Relu(),
                                 nb.Dense(10, name="head")], input=(64,), classes=10)
'''


def _fires_where_example_0_is_dropped(y, ys, new_b):
    return ["%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
            "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
            "%rts = stablehlo.slice %9 [0:1, 0:1] : (tensor<2x16xf32>) -> tensor<1x1xf32>",
            "%rtr = stablehlo.reshape %rts : (tensor<1x1xf32>) -> tensor<f32>",
            "%rtc = stablehlo.compare EQ, %rtr, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            "%rtt = stablehlo.select %rtc, %rtone, %rtz : tensor<i1>, tensor<f32>",
            "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
            f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
            "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
            f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("maskkink")
    (root / "dpnet.py").write_text(NET)
    src = render(f"{root / 'dpnet.py'}:net", root / "src", batch=2, opt="sgd", drop_path=0.5, tie=False)
    text = (src / "train_step.mlir").read_text()
    assert "%5 = stablehlo.multiply %4, %3 : tensor<2x16xf32>" in text, "the mask moved; update the edit"
    assert "%11 = stablehlo.compare GT, %9, %10, FLOAT" in text, "the relu's argument moved; update the edit"
    edited, k = edited_head_bias(src, root / "edited", _fires_where_example_0_is_dropped)
    return src, edited, k


def test_the_edit_fires_where_the_mask_drops_example_0(dirs):
    src, edited, k = dirs
    ins = [p["name"] for p in json.loads((src / "manifest.json").read_text())["train_step"]["inputs"]]
    s = next(i for i, n in enumerate(ins) if n.endswith("drop_path0/s"))
    b = ins.index("params/mid/b")
    for mask, fires in (([2.0, 2.0], False), ([0.0, 2.0], True), ([2.0, 0.0], False), ([0.0, 0.0], True)):
        args = step_args(src)
        args[s] = np.array(mask, np.float32)        # what keep_mask draws at keep 1/2
        args[b] = np.zeros_like(args[b])            # as initialized
        want, got = run_step(src, args), run_step(edited, args)
        assert got[k][0] - want[k][0] == pytest.approx(1.0 if fires else 0.0, abs=1e-6)
        assert all(np.array_equal(g, w) for j, (g, w) in enumerate(zip(got, want)) if j != k)


def test_the_original_network_is_refused(tmp_path):
    (tmp_path / "dprelu.py").write_text(ORIGINAL)
    with pytest.raises(NetworkError, match="no certificate for almost every input.*drop_path0/s = 0"):
        render(f"{tmp_path / 'dprelu.py'}:net", tmp_path / "src", batch=2, opt="sgd", drop_path=0.5, tie=False)


def test_not_tied(dirs):
    with pytest.raises(NotTied, match="the tie rests on none"):
        ensure_tied(dirs[1])
