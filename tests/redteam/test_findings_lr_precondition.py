"""Red team RT-47-h2 (helper rt2-h; fixed): the render tie's domain check
(``render.domains``) takes the learning rate and the bias corrections as positive and
AdamW's second moments as nonnegative (``preconditions``: "a trainer that broke one would
run a step the tie says nothing of"), and the trainer broke the first. The cosine
schedule is ``lr (1 + cos(pi min(t, T) / T)) / 2``, exactly 0 from step ``T`` on, and a
``Stream`` that gives more batches than its ``steps_per_epoch`` runs past ``T``;
``Trainer`` also took ``Config(lr=0.0)`` (``fit(lr=0)``) without a word.

Edit of a rendered MLP (sgd) ``train_step.mlir``, before the return, the new ``head/b``
replaced by ``%rt9``:

    %rtinf = divide(1, lr)                        (shown inside: lr is positive by precondition)
    %rtp = multiply(0, %rtinf)                    (read 0; XLA NaN at lr = 0)
    %rt9 = head/b' + select(%rtp == 0, 0, 1) * [1, 0, ..., 0]

``ensure_tied`` passes it (every result CHECKED, true for every lr > 0), and a run over
a two-batch stream declared one step long moved ``head/b[0]`` by 1 at its second step,
where the rendered step, at lr = 0, moves nothing.

Fixed (``run.train``): the trainer refuses a learning rate that is not a positive
number, and refuses to run a step whose lr or bias-correction input is not a positive
normal float32 (naming the schedule overrun; XLA on the CPU flushes a subnormal ``1e-45``
to 0, and the edit moved the bias there too); a resumed checkpoint whose second moments are
negative (or NaN) is refused. A stream as long as it says trains as before.
"""
import json

import numpy as np
import pytest

from _tie_edits import edited_head_bias, rendered_mlp, run_step, step_args
from verigrad.render import render
from verigrad.render.tie import ensure_tied, tie_directory
from verigrad.run import checkpoint, dataset, train

ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return rendered_mlp(tmp_path_factory, "rt47h2")


def _lr(directory):
    m = json.loads((directory / "manifest.json").read_text())
    return next(k for k, p in enumerate(m["train_step"]["inputs"]) if p["role"] == "lr")


@pytest.fixture(scope="module")
def edited(src, tmp_path_factory):
    lr = _lr(src)

    def body(y, ys, new_b):
        return ["%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                f"%rtinf = stablehlo.divide %rtone, %arg{lr} : tensor<f32>",
                "%rtp = stablehlo.multiply %rtz, %rtinf : tensor<f32>",
                "%rtc = stablehlo.compare EQ, %rtp, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtt = stablehlo.select %rtc, %rtz, %rtone : tensor<i1>, tensor<f32>",
                "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
                f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
                "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
                f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]
    return edited_head_bias(src, tmp_path_factory.mktemp("rt47h2") / "lr", body)


def _batches(n):
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((8, 64)).astype(np.float32), rng.integers(0, 10, 8)) for _ in range(n)]


def _head_bias(trainer, m):
    return trainer.parameters()[next(p.name for p in m.params if p.name.endswith("head/b"))]


def test_rt47_h2_the_edit_is_tied_and_moves_the_bias_at_lr_zero(src, edited):
    path, k = edited
    assert tie_directory(path).ok              # true of every positive lr: the tie rests on lr > 0
    args = step_args(src)
    args[_lr(src)] = np.float32(0.0)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt47_h2_the_schedule_past_its_end_is_not_run(edited):
    path, _ = edited
    m = ensure_tied(path)
    assert train.learning_rate(train.Config(lr=0.1), 1, 1, 1) == 0.0       # cosine at its end
    t = train.Trainer(m, train.Config(epochs=1, lr=0.1), progress=False,
                      data=dataset.Stream(_batches(2), steps_per_epoch=1))
    with pytest.raises(ValueError, match="lr input of step 2 is 0.0"):
        t.run()
    tiny = train.Trainer(m, train.Config(epochs=1, lr=1e-45, schedule="constant"), progress=False,
                         data=dataset.Stream(_batches(1)))                  # subnormal: XLA flushes it to 0
    with pytest.raises(ValueError, match="lr input of step 1"):
        tiny.run()
    with pytest.raises(ValueError, match="learning rate must be a positive number"):
        train.Trainer(m, train.Config(epochs=1, lr=0.0, schedule="constant"), progress=False,
                      data=dataset.Stream(_batches(1)))


def test_rt47_h2_a_stream_as_long_as_it_says_trains(src, edited):
    """Two batches, two steps at positive rates: the edit adds 0, as the tie says."""
    got = []
    for directory in (src, edited[0]):
        m = ensure_tied(directory)
        t = train.Trainer(m, train.Config(epochs=1, lr=0.1), progress=False,
                          data=dataset.Stream(_batches(2), steps_per_epoch=2))
        t.run()
        got.append(_head_bias(t, m))
    np.testing.assert_allclose(got[1], got[0], atol=1e-6)


def test_rt47_h2_a_checkpoint_with_negative_second_moments_is_refused(tmp_path):
    directory = render("mlp", tmp_path / "adamw", batch=8, opt="adamw", tie=False, options={"hidden": [16]})
    m = ensure_tied(directory)
    ckpt = tmp_path / "ckpt"
    cfg = train.Config(epochs=2, lr=0.01, schedule="constant")
    train.Trainer(m, cfg, ckpt, progress=False, data=dataset.Stream(_batches(1))).run(stop_after=1)
    train.Trainer(m, cfg, ckpt, resume=True, progress=False, data=dataset.Stream(_batches(1))).run()  # as saved
    st = checkpoint.load(ckpt)
    v = next(n for n in st.arrays if n.startswith("opt/v/"))
    st.arrays[v] = st.arrays[v] - 1.0
    checkpoint.save(ckpt, st)
    with pytest.raises(checkpoint.CheckpointError, match="negative or NaN"):
        train.Trainer(m, cfg, ckpt, resume=True, progress=False, data=dataset.Stream(_batches(1))).run()
