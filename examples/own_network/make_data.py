"""Write scikit-learn's digits as .npz files a user would bring: train.npz and test.npz.

Each holds ``x`` (images, float32, shape (N, 8, 8, 1), values in [0, 1]) and ``y``
(int64 labels 0..9). ``--limit N`` keeps the first N training examples (the tests use
a small set).
"""
import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits


def write(out=".", limit=None):
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[..., None]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))
    test, train = order[:360], order[360:]
    if limit:
        train = train[:limit]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "train.npz", x=x[train], y=y[train])
    np.savez(out / "test.npz", x=x[test], y=y[test])
    return out / "train.npz", out / "test.npz"


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=".")
    p.add_argument("--limit", type=int)
    a = p.parse_args()
    for f in write(a.out, a.limit):
        print("wrote", f)
