"""The same network trained from Python: numpy arrays in, parameters out, predictions.

    python examples/own_network/train_from_python.py
"""
from pathlib import Path

import numpy as np

from verigrad.run.api import fit, predict

HERE = Path(__file__).resolve().parent


def batches(x, y, size):
    """An iterator-of-batches entry point: a generator function, called each epoch."""
    def epoch():
        order = np.random.default_rng(len(x)).permutation(len(x))
        for i in range(0, len(order) - size + 1, size):
            yield x[order[i:i + size]], y[order[i:i + size]]
    return epoch


if __name__ == "__main__":
    from make_data import write
    train, test = write(HERE / "build" / "data")          # build/ is ignored by git
    tr, te = np.load(train), np.load(test)
    result = fit(str(HERE / "net.py:net"), (tr["x"], tr["y"], te["x"], te["y"]), epochs=10, batch=32,
                 out=HERE / "build" / "own")
    print("test accuracy", result.summary.test_accuracy, "parameters in", result.params_file)
    logits = predict(result.directory, te["x"])
    print("predict: accuracy", float(np.mean(np.argmax(logits, -1) == te["y"])))
    # An iterator of batches instead of arrays: a generator function, called each epoch.
    from verigrad.run.dataset import Stream
    stream = Stream(batches(tr["x"], tr["y"], 32), te["x"], te["y"], steps_per_epoch=len(tr["x"]) // 32)
    again = fit(result.directory, stream, epochs=10, params=HERE / "build" / "own" / "stream.safetensors")
    print("from batches: test accuracy", again.summary.test_accuracy)
