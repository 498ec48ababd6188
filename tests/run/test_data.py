"""Digits: fixed split, scaling, smoothed targets, seeded batches."""
import numpy as np
import pytest

from verigrad.run import data


def test_fixed_stratified_split():
    s = data.digits()
    assert s.x_train.shape == (1437, 64) and s.x_test.shape == (360, 64)
    assert s.x_train.dtype == np.float32 and s.x_train.min() >= 0 and s.x_train.max() <= 1
    assert np.bincount(s.y_test).min() >= 35            # stratified: every class ~36 times
    # Deterministic: a fixed fingerprint of the split, independent of any global seed.
    np.random.seed(123)
    data.digits.cache_clear()
    again = data.digits()
    assert np.array_equal(again.y_test, s.y_test) and np.array_equal(again.x_train, s.x_train)
    assert list(s.y_test[:10]) == list(again.y_test[:10])


def test_label_smoothing():
    t = data.targets(np.array([0, 3]), 10, 0.1)
    assert t.dtype == np.float32
    np.testing.assert_allclose(t.sum(axis=1), 1.0, rtol=1e-6)
    assert t[0, 0] == pytest.approx(0.91) and t[0, 1] == pytest.approx(0.01) and t[1, 3] == pytest.approx(0.91)
    assert np.array_equal(data.targets(np.array([2]), 4, 0.0), [[0, 0, 1, 0]])


def test_batches_are_seeded_and_drop_the_partial_batch():
    s = data.digits()
    ep = lambda seed: list(data.batches(s.x_train, s.y_train, 64, np.random.default_rng(seed)))  # noqa: E731
    a, b, c = ep(1), ep(1), ep(2)
    assert len(a) == 1437 // 64 and all(x.shape == (64, 64) and y.shape == (64, 10) for x, y, _ in a)
    assert all(np.array_equal(p[2], q[2]) for p, q in zip(a, b))
    assert not np.array_equal(a[0][2], c[0][2])
    seen = np.concatenate([lab for _, _, lab in a])
    assert len(seen) == 22 * 64


def test_eval_batches_cover_every_example_once():
    s = data.digits()
    got = [(x, y, v) for x, y, v in data.eval_batches(s.x_test, s.y_test, 64)]
    assert sum(v for _, _, v in got) == 360 and all(x.shape == (64, 64) for x, _, _ in got)
    assert np.array_equal(np.concatenate([y[:v] for _, y, v in got]), s.y_test)
