"""The training loop over a manifest: learns digits, resumes bit-identically, feeds masks
as the manifest says, stops on a NaN naming the step."""
import numpy as np
import pytest

from verigrad.run import checkpoint, train


def test_learns_digits(ref):
    s = train.Trainer(ref, train.Config(epochs=6, lr=1e-2), progress=False).run()
    assert s.steps == 6 * 22 and s.history[-1]["loss"] < s.history[0]["loss"]
    assert s.test_accuracy >= 0.9


def test_resume_is_bit_identical(ref, tmp_path):
    cfg = train.Config(epochs=4, lr=3e-3)
    straight = train.Trainer(ref, cfg, progress=False)
    straight.run()
    first = train.Trainer(ref, cfg, tmp_path, progress=False)
    first.run(stop_after=2)
    assert checkpoint.load(tmp_path).epoch == 2
    second = train.Trainer(ref, cfg, tmp_path, resume=True, progress=False)
    s = second.run()
    assert s.resumed_from_epoch == 2 and s.steps == 4 * 22
    a, b = straight.parameters(), second.parameters()
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    # A run that is not resumed differs (the check above can fail).
    other = train.Trainer(ref, train.Config(epochs=4, lr=3e-3, seed=1), progress=False)
    other.run()
    assert not np.array_equal(other.parameters()["params/fc1/W"], a["params/fc1/W"])


def test_resume_refuses_another_configuration(ref, tmp_path):
    train.Trainer(ref, train.Config(epochs=1), tmp_path, progress=False).run()
    with pytest.raises(checkpoint.CheckpointError, match="lr was 0.001 in the checkpointed run, now 0.5"):
        train.Trainer(ref, train.Config(epochs=1, lr=0.5), tmp_path, resume=True, progress=False).run()


def test_resume_with_other_epochs_only_under_the_constant_schedule(ref, tmp_path):
    train.Trainer(ref, train.Config(epochs=1), tmp_path, progress=False).run()
    with pytest.raises(checkpoint.CheckpointError, match="has 1 epochs of a cosine schedule.*--epochs 1"):
        train.Trainer(ref, train.Config(epochs=2), tmp_path, resume=True, progress=False).run()
    constant = tmp_path / "constant"
    train.Trainer(ref, train.Config(epochs=1, schedule="constant"), constant, progress=False).run()
    s = train.Trainer(ref, train.Config(epochs=2, schedule="constant"), constant, resume=True, progress=False).run()
    assert s.resumed_from_epoch == 1 and s.steps == 2 * 22


def test_checkpoint_is_written_atomically(tmp_path, monkeypatch):
    state = checkpoint.State({"w": np.arange(3.0)}, 5, 1, {"x": 1}, {"lr": 1}, "abc")
    checkpoint.save(tmp_path, state)

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(OSError):
        checkpoint.save(tmp_path, checkpoint.State({"w": np.zeros(3)}, 9, 2, {}, {}, "abc"))
    back = checkpoint.load(tmp_path)            # the old checkpoint, whole
    assert back.step == 5 and np.array_equal(back.arrays["w"], np.arange(3.0))
    assert [p.name for p in tmp_path.iterdir()] == [checkpoint.FILE]


def test_nan_loss_stops_naming_the_step(ref):
    with pytest.raises(train.Diverged, match=r"the loss is (nan|inf) at step \d+ \(epoch 1, batch \d+ of 22"):
        train.Trainer(ref, train.Config(epochs=1, lr=1e6, schedule="constant"), progress=False).run()


def test_masks_and_scalars_follow_the_manifest(ref, monkeypatch):
    """Training masks are bernoulli(keep)/keep per example; bias corrections are 1 - beta^t."""
    tr = train.Trainer(ref, train.Config(epochs=1), progress=False)
    seen = []
    real = tr.step_exe._run
    monkeypatch.setattr(tr.step_exe, "_run", lambda args: seen.append(args) or real(args))
    tr.run(stop_after=1)
    names = [p.name for p in ref.train_step.inputs]
    masks = np.stack([np.asarray(a[names.index("site/block0/mlp")]) for a in seen])
    keep = ref.train_step.role("drop_mask")[0].keep
    assert sorted(float(v) for v in np.unique(masks)) == pytest.approx([0.0, 1 / keep])
    assert abs((masks > 0).mean() - keep) < 0.03
    bc1 = [float(a[names.index("bc1")]) for a in seen]
    assert bc1[0] == pytest.approx(0.1) and bc1[1] == pytest.approx(1 - 0.9 ** 2)


def test_evaluation_feeds_ones(ref, monkeypatch):
    tr = train.Trainer(ref, train.Config(epochs=1), progress=False)
    seen = []
    real = tr.fwd_exe._run
    monkeypatch.setattr(tr.fwd_exe, "_run", lambda args: seen.append(args) or real(args))
    tr.run()
    assert seen and all(np.all(np.asarray(a[-1]) == 1.0) for a in seen)
