"""Issue 15: your network (verigrad.nn.builder), your data (--data), your parameters
(params.safetensors, verigrad predict), your devices and processes.

The CLI cases render the example's small CNN (examples/own_network/net.py:small) once
and train it on a small .npz written by the example's make_data.py; bad input is one
line and exit 3 (a refused tie: exit 1), checked before any step runs."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from verigrad.cli import main
from verigrad.nn import builder as nb
from verigrad.nn.layers import Layer
from verigrad.run import dataset, params_io

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_network"


def _example_module(name):
    spec = importlib.util.spec_from_file_location(f"_own_network_{name}", EXAMPLE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _one_line(capsys, code, argv, match):
    assert main(argv) == code, argv
    err = capsys.readouterr().err
    assert match in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# -- the builder ---------------------------------------------------------------------------------------


def _scale(x):
    """A custom layer y = 3x with its (right) backward dx = 3 dy."""
    return Layer("scale3", x, x, lambda p, x: 3.0 * x, lambda p, x, dy: (3.0 * dy, {}))


def _scale_wrong(x):
    """y = 3x with the backward of y = x: no certificate."""
    return Layer("scale3", x, x, lambda p, x: 3.0 * x, lambda p, x, dy: (dy, {}))


def _cumprod(x):
    import jax.numpy as jnp
    return Layer("cumprod", x, x, lambda p, x: jnp.cumprod(x, axis=-1), lambda p, x, dy: (dy, {}))


def test_a_network_is_certified_for_every_batch_size_when_built():
    net = nb.network("t", [nb.Flatten(), nb.Dense(16), nb.Relu(), nb.Custom(_scale),
                           nb.Residual(nb.Dense(16), nb.Tanh(), drop_path=0.5), nb.Dense(10)], input=(4, 4, 1))
    cert = net.certificate
    assert cert is not None and cert.proved
    # every parameter and the input, for the symbolic batch B
    assert set(cert.theorems) == {cert.x.name} | {p.name for p in net.params}
    assert str(cert.x.shape[0]) == "B"
    assert [p.name for p in net.params] == ["dense0/W", "dense0/b", "residual0/dense0/W", "residual0/dense0/b",
                                           "dense1/W", "dense1/b"]
    assert net.sites == ("residual0/s",)
    built = net.build(8, drop_path_rate=0.2)
    assert built.layer.x == (8, 4, 4, 1) and built.layer.y == (8, 10)
    assert built.keep == {"residual0/s": pytest.approx(0.9)}        # 1 - 0.2 * 0.5
    assert "6 parameters" not in net.summary() and "residual0/s" in net.summary()


def test_the_example_networks_build():
    mod = _example_module("net")
    assert mod.net.certificate.proved and mod.small.certificate.proved
    assert "block/s" in mod.net.sites and any(p.name == "head/W" for p in mod.net.params)


@pytest.mark.parametrize("body, kw, match", [
    ([nb.Flatten(), nb.Dense(8), nb.Conv(4), nb.Dense(10)], {}, "piece 2 (Conv(4), conv0) at input (B, 8): conv2d: "
                                                                "input shape (B, 8) should have rank 4"),
    ([nb.Conv(4), nb.Dense(10)], {}, "ends in shape (B, 4, 4, 10); the loss takes logits of shape (B, 10)"),
    ([nb.Flatten(), nb.Residual(nb.Dense(8)), nb.Dense(10)], {}, "a skip needs equal shapes"),
    ([nb.Flatten(), nb.Dense(8, name="fc"), nb.Dense(10, name="fc")], {}, "two pieces are named 'fc'"),
    ([nb.Flatten(), "dense"], {}, "piece 1 is a str, not a piece of verigrad.nn.builder"),
    ([nb.Flatten(), nb.Dense(10)], {"classes": 3}, "ends in shape (B, 10); the loss takes logits of shape (B, 3)"),
    ([nb.Conv(4), nb.MaxPool(), nb.MaxPool(), nb.MaxPool(), nb.Head()], {"input": (6, 6, 1)},
     "spatial size 3 of input (B, 3, 3, 4) must be a multiple of 2"),
    ([nb.Flatten(), nb.Custom(_scale_wrong), nb.Dense(10)], {},
     "piece 1 (Custom(_scale_wrong), custom0) has no certificate: the kernel did not prove its backward for its input"),
    ([nb.Flatten(), nb.Custom(_cumprod), nb.Dense(10)], {},
     "piece 1 (Custom(_cumprod), custom0) has no certificate: its backward could not be imported"),
    ([nb.Flatten(), nb.Custom(lambda x: 3), nb.Dense(10)], {}, "returned a int, not a verigrad.nn.layers.Layer"),
])
def test_a_bad_network_is_one_line_naming_the_piece(body, kw, match):
    args = {"input": (4, 4, 1), **kw}
    with pytest.raises(nb.NetworkError) as e:
        nb.network("bad", body, **args)
    msg = str(e.value)
    assert msg.startswith("network bad: ") and match in msg and "\n" not in msg, msg


def test_a_layer_scale_initializer_is_a_manifest_initializer():
    net = nb.network("ls", [nb.Flatten(), nb.Dense(8), nb.LayerScale(0.1), nb.Dense(10)], input=(4, 4, 1))
    assert any(str(p.init) == "constant(0.1)" for p in net.params)


@pytest.mark.parametrize("text, spec, match", [
    (None, "missing.py:net", "missing.py: no such network file"),
    ("net = (", "f.py:net", "f.py:1: SyntaxError"),
    ("x = 1\n", "f.py:net", "f.py defines no 'net'"),
    ("net = 3\n", "f.py:net", "f.py:net is a int, not a network"),
    ("raise RuntimeError('boom')\n", "f.py", "f.py:1: RuntimeError: boom"),
    ("from verigrad.nn import builder as nb\nnet = nb.network('b', [nb.Conv(3)], input=(8,))\n", "f.py",
     "f.py: network b: piece 0 (Conv(3), conv0) at input (B, 8)"),
])
def test_loading_a_network_file_is_one_line(tmp_path, monkeypatch, text, spec, match):
    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / "f.py").write_text(text)
    with pytest.raises(nb.NetworkError) as e:
        nb.load(spec)
    assert match in str(e.value) and "\n" not in str(e.value), str(e.value)


# -- data ------------------------------------------------------------------------------------------------


def _xy(n=40, shape=(4, 4, 1)):
    rng = np.random.default_rng(0)
    return rng.random((n,) + shape).astype(np.float32), rng.integers(0, 10, n)


@pytest.mark.parametrize("change, match", [
    (lambda x, y: (x.astype(np.complex64), y), "x has dtype complex64; examples must be real numbers"),
    (lambda x, y: (x > 0.5, y), "x has dtype bool"),
    (lambda x, y: (np.where(np.arange(x.size).reshape(x.shape) == 17, np.nan, x), y),
     "x has 1 NaN value(s), the first at x[1, 0, 1, 0]"),
    (lambda x, y: (np.where(np.arange(x.size).reshape(x.shape) == 3, np.inf, x), y), "x has 1 infinite value(s)"),
    (lambda x, y: (x.astype(np.float64) * 1e39, y), "overflows float32"),
    (lambda x, y: (x, y[:-1]), "y has 39 labels for 40 examples"),
    (lambda x, y: (x, y + 0.5), "is not a whole number"),
    (lambda x, y: (x, y - 20), "is negative"),
    (lambda x, y: (x, np.eye(10)[y]), "(not one-hot rows)"),
    (lambda x, y: (x, y.astype(str)), "y has dtype <U"),
    (lambda x, y: (x[:0], y[:0]), "x has no examples"),
])
def test_bad_arrays_are_one_line(change, match):
    x, y = change(*_xy())
    with pytest.raises(dataset.DataError) as e:
        dataset.from_arrays(x, y, source="d")
    assert match in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_arrays_fit_the_network_or_say_why():
    x, y = _xy()
    d = dataset.from_arrays(x.reshape(40, 16), y, source="d", hold_out=True)
    assert len(d.x_train) == 32 and len(d.x_test) == 8 and d.held_out        # a fixed 20 % held out
    assert sorted(np.concatenate([d.y_train, d.y_test]).tolist()) == sorted(y.tolist())
    fitted = d.fitted((4, 4, 1), 10, 8)                     # flattened examples take the input's shape
    assert fitted.x_train.shape == (32, 4, 4, 1) and fitted.x_train.dtype == np.float32
    assert dataset.from_arrays(x[..., 0], y).fitted((4, 4, 1), 10, 8).x_train.shape == (40, 4, 4, 1)
    with pytest.raises(dataset.DataError, match=r"d: y\[\d+\] = 9 is out of range for 9 classes"):
        d.fitted((4, 4, 1), 9, 8)
    with pytest.raises(dataset.DataError, match=r"examples of shape \(1, 4, 4\) \(16 values\); the network takes "
                                                r"\(4, 4, 1\)"):
        dataset.from_arrays(x.reshape(40, 1, 4, 4), y, source="d").fitted((4, 4, 1), 10, 8)
    with pytest.raises(dataset.DataError, match="32 training examples, fewer than one batch of 64"):
        d.fitted((4, 4, 1), 10, 64)


def test_npz_files_and_python_entry_points(tmp_path):
    x, y = _xy()
    np.savez(tmp_path / "ok.npz", x=x, y=y, x_test=x[:5], y_test=y[:5])
    d = dataset.load(tmp_path / "ok.npz")
    assert len(d.x_train) == 40 and len(d.x_test) == 5 and not d.held_out
    np.savez(tmp_path / "nolabels.npz", images=x)
    with pytest.raises(dataset.DataError, match=r"nolabels.npz has no array 'x' \(it has: images\)"):
        dataset.load(tmp_path / "nolabels.npz")
    np.savez(tmp_path / "obj.npz", x=np.array([object()] * 3, dtype=object), y=y[:3])
    with pytest.raises(dataset.DataError, match="array of Python objects"):
        dataset.load(tmp_path / "obj.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(dataset.DataError, match="not a readable .npz file"):
        dataset.load(tmp_path / "junk.npz")
    (tmp_path / "src.py").write_text(
        "import numpy as np\n"
        "def arrays():\n    return np.zeros((6, 4, 4, 1), np.float32), np.arange(6) % 3\n"
        "def data():\n    for k in range(3):\n        yield np.zeros((2, 16), np.float32), np.array([k, 1])\n")
    arr = dataset.load(f"{tmp_path / 'src.py'}:arrays")
    assert isinstance(arr, dataset.Arrays) and len(arr.x_train) + len(arr.x_test) == 6
    stream = dataset.load(str(tmp_path / "src.py"))
    assert isinstance(stream, dataset.Stream)
    batches = [stream.checked(b, k + 1, (4, 4, 1), 10, 2) for k, b in enumerate(stream.epoch())]
    assert [b[0].shape for b in batches] == [(2, 4, 4, 1)] * 3
    with pytest.raises(dataset.DataError, match=r"batch 4: y\[0\] = 12 is out of range for 10 classes"):
        stream.checked((np.zeros((2, 16)), np.array([12, 1])), 4, (4, 4, 1), 10, 2)
    one_shot = dataset.Stream(iter([(np.zeros((2, 16)), np.zeros(2, int))]), steps_per_epoch=1)
    list(one_shot.epoch())
    with pytest.raises(dataset.DataError, match="a one-shot iterator gives only one epoch"):
        one_shot.epoch()


# -- parameters out ----------------------------------------------------------------------------------------


def test_safetensors_round_trip_and_corruption(tmp_path):
    arrays = {"params/conv0/W": np.arange(24, dtype=np.float32).reshape(2, 3, 4), "params/head/b": np.ones(3, np.float32)}
    p = params_io.save(tmp_path / "p.safetensors", arrays, {"net": "x"})
    back, meta = params_io.load(p)
    assert meta == {"net": "x"} and set(back) == set(arrays)
    assert all(np.array_equal(back[k], arrays[k]) and back[k].dtype == np.float32 for k in arrays)
    blob = p.read_bytes()
    n = int.from_bytes(blob[:8], "little")
    assert n % 8 == 0 and json.loads(blob[8:8 + n])["params/head/b"]["dtype"] == "F32"
    (tmp_path / "cut.safetensors").write_bytes(blob[:-4])
    with pytest.raises(params_io.ParamsError, match="does not fill|outside the data"):
        params_io.load(tmp_path / "cut.safetensors")
    (tmp_path / "bad.safetensors").write_bytes(blob[:8] + b"[" + blob[9:])
    with pytest.raises(params_io.ParamsError, match="header is not JSON"):
        params_io.load(tmp_path / "bad.safetensors")
    npz = params_io.save(tmp_path / "p.npz", arrays)
    assert all(np.array_equal(params_io.load(npz)[0][k], arrays[k]) for k in arrays)
    try:                                        # a second reader, where one is installed
        from safetensors.numpy import load_file
    except ImportError:
        return
    other = load_file(str(p))
    assert all(np.array_equal(other[k], arrays[k]) for k in arrays)


# -- the CLI: train, predict, bad input ---------------------------------------------------------------


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The example's data (256 training examples) and its small CNN rendered, trained
    one epoch: ``(folder, rendered directory, train summary)``."""
    import contextlib
    import io
    folder = tmp_path_factory.mktemp("own")
    _example_module("make_data").write(folder, limit=256)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["train", f"{EXAMPLE / 'net.py'}:small", "--data", str(folder / "train.npz"), "--test",
                     str(folder / "test.npz"), "--epochs", "2", "--batch", "32", "--lr", "0.01",
                     "--out", str(folder / "small"), "--json"])
    assert code == 0
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    return folder, folder / "small", summary


def test_the_example_trains_from_its_file_and_writes_its_parameters(work):
    folder, directory, summary = work
    assert summary["net"] == "own_cnn_small" and summary["data"] == "train.npz" and summary["steps"] == 16
    assert 0.2 < summary["test_accuracy"] <= 1.0                       # learning, on 360 test digits
    m = json.loads((directory / "manifest.json").read_text())
    assert {k: v["status"] for k, v in m["certificates"].items()} == {
        "network_backward": "PROVED", "loss_backward": "PROVED", "render_tie": "CHECKED"}
    assert m["render"]["source"]["file"] == str(EXAMPLE / "net.py") and m["render"]["source"]["name"] == "small"
    arrays, meta = params_io.load(directory / "params.safetensors")
    assert list(arrays) == [p["name"] for p in m["params"]]              # the manifest's names, in order
    assert meta["forward_sha256"] == m["forward"]["sha256"]


def test_predict_runs_the_tied_forward_with_the_trained_parameters(work, capsys):
    folder, directory, summary = work
    assert main(["predict", str(directory), "--data", str(folder / "test.npz"), "--out",
                 str(folder / "pred.npz"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["examples"] == 360 and result["render_tie"] == "CHECKED"
    assert result["accuracy"] == pytest.approx(summary["test_accuracy"])   # the same forward, the same parameters
    pred = np.load(folder / "pred.npz")
    assert pred["logits"].shape == (360, 10) and np.array_equal(pred["labels"], pred["logits"].argmax(-1))
    # the same from Python, from a .npz copy of the parameters
    from verigrad.run.api import predict
    arrays, _ = params_io.load(directory / "params.safetensors")
    params_io.save(folder / "copy.npz", arrays)
    logits = predict(directory, np.load(folder / "test.npz")["x"], params=folder / "copy.npz")
    assert np.array_equal(logits, pred["logits"])


def test_predict_says_when_the_parameters_were_trained_with_another_forward(work, capsys):
    """Parameters whose names and shapes fit but whose file records another forward
    module (the folder rendered again since) are used as given, and predict says so."""
    folder, directory, _ = work
    arrays, meta = params_io.load(directory / "params.safetensors")
    assert meta["forward_sha256"]                                     # training records it
    params_io.save(folder / "own.safetensors", arrays, meta)
    params_io.save(folder / "other.safetensors", arrays, {**meta, "forward_sha256": "0" * 64})
    for name, same in (("own", True), ("other", False)):
        assert main(["predict", str(directory), "--data", str(folder / "test.npz"), "--params",
                     str(folder / f"{name}.safetensors"), "--out", str(folder / f"{name}.npz"), "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out.strip().splitlines()[-1])["params_trained_for_this_forward"] is same
        assert ("trained with another forward module" in err) is (not same), err


def test_training_from_python_on_arrays_and_on_a_generator(work):
    from verigrad.run.api import fit
    folder, directory, _ = work
    tr, te = np.load(folder / "train.npz"), np.load(folder / "test.npz")
    a = fit(directory, (tr["x"], tr["y"], te["x"], te["y"]), epochs=1, lr=0.01, params=folder / "a.npz")
    assert a.summary.steps == 8 and a.params_file == folder / "a.npz"

    def batches():                                   # the same batches the arrays give, as a generator
        rng = np.random.default_rng(0)
        order = rng.permutation(len(tr["x"]))
        for i in range(0, 256, 32):
            yield tr["x"][order[i:i + 32]], tr["y"][order[i:i + 32]]
    b = fit(directory, dataset.Stream(batches, te["x"], te["y"]), epochs=2, lr=0.01, schedule="constant",
            params=folder / "b.npz")
    assert b.summary.steps == 16 and 0 <= b.summary.test_accuracy <= 1     # the generator called again
    assert set(a.params) == set(b.params) and all(np.isfinite(v).all() for v in b.params.values())


def _bad_npz(folder, name, **arrays):
    path = folder / name
    np.savez(path, **arrays)
    return str(path)


def test_bad_data_is_one_line_before_any_step(work, tmp_path, capsys):
    folder, directory, _ = work
    x, y = np.load(folder / "train.npz")["x"], np.load(folder / "train.npz")["y"]
    nan = x.copy()
    nan[3, 2, 2, 0] = np.nan
    cases = [
        (_bad_npz(tmp_path, "nan.npz", x=nan, y=y), "nan.npz: x has 1 NaN value(s), the first at x[3, 2, 2, 0]"),
        (_bad_npz(tmp_path, "range.npz", x=x, y=y + 5), "is out of range for 10 classes"),
        (_bad_npz(tmp_path, "shape.npz", x=x[:, :4], y=y), "examples of shape (4, 8, 1) (32 values); the network "
                                                           "takes (8, 8, 1)"),
        (_bad_npz(tmp_path, "dtype.npz", x=x.astype(np.complex64), y=y), "x has dtype complex64"),
        (_bad_npz(tmp_path, "nolabels.npz", x=x), "nolabels.npz has no array 'y' (it has: x)"),
        (_bad_npz(tmp_path, "few.npz", x=x[:20], y=y[:20]), "fewer than one batch of 32"),
        (str(tmp_path / "absent.npz"), "absent.npz: no such file"),
    ]
    for path, match in cases:
        _one_line(capsys, 3, ["train", str(directory), "--data", path, "--epochs", "1", "--json"], match)
    assert not (tmp_path / "ckpt").exists()


def test_bad_networks_and_options_are_one_line(work, tmp_path, capsys):
    folder, directory, _ = work
    (tmp_path / "wrong.py").write_text(
        "from verigrad.nn import builder as nb\nfrom verigrad.nn.layers import Layer\n"
        "def twice(x):\n    return Layer('twice', x, x, lambda p, x: 2 * x, lambda p, x, dy: (dy, {}))\n"
        "net = nb.network('w', [nb.Flatten(), nb.Custom(twice), nb.Dense(10)], input=(8, 8, 1))\n")
    (tmp_path / "shapes.py").write_text(
        "from verigrad.nn import builder as nb\n"
        "net = nb.network('s', [nb.Flatten(), nb.Residual(nb.Dense(32)), nb.Dense(10)], input=(8, 8, 1))\n")
    data = str(folder / "train.npz")
    for argv, match in [
        (["train", f"{tmp_path / 'wrong.py'}:net", "--data", data], "piece 1 (Custom(twice), custom0) has no "
                                                                    "certificate"),
        (["render", f"{tmp_path / 'wrong.py'}:net", "--out", str(tmp_path / "r")], "has no certificate"),
        (["train", f"{tmp_path / 'shapes.py'}:net", "--data", data], "branch dense0 maps (B, 64) -> (B, 32); a skip "
                                                                     "needs equal shapes"),
        (["train", f"{EXAMPLE / 'net.py'}:other", "--data", data], "net.py defines no 'other' (its networks: net, "
                                                                   "small)"),
        (["train", str(directory), "--device", "gpu"] if _no_gpu() else ["train", str(directory), "--devices", "0"],
         "--device gpu: jax finds no GPU" if _no_gpu() else "--devices must be >= 1"),
        (["predict", str(directory), "--data", data, "--params", str(tmp_path / "none.npz")], "no such file"),
        (["predict", str(tmp_path), "--data", data], "not a rendered directory"),
        (["predict", str(directory), "--data", _bad_npz(tmp_path, "p.npz", x=np.zeros((4, 3)))],
         "examples of shape (3,) (3 values); the network takes (8, 8, 1)"),
    ]:
        _one_line(capsys, 3, argv, match)


def test_options_that_do_not_go_together_are_exit_2(work, capsys):
    folder, directory, _ = work
    data = str(folder / "train.npz")
    for argv, match in [
        (["train", str(directory), "--num-processes", "2"], "needs --coordinator HOST:PORT and --process-id"),
        (["train", str(directory), "--process-id", "1"], "go with --num-processes"),
        (["train", str(directory), "--test", data], "--test needs --data"),
        (["train", str(directory), "--params", "p.bin"], "should end in .safetensors or .npz"),
        (["predict", str(directory), "--data", data, "--out", "p.txt"], "--out p.txt: should end in .npz"),
    ]:
        _one_line(capsys, 2, argv, match)


def _no_gpu():
    import jax
    return not any(d.platform == "gpu" for d in jax.devices())


def test_a_network_file_changed_after_rendering_is_not_trained(work, tmp_path, capsys):
    import shutil
    folder, directory, _ = work
    src = tmp_path / "net.py"
    shutil.copy(EXAMPLE / "net.py", src)
    d = tmp_path / "r"
    assert main(["render", f"{src}:small", "--out", str(d), "--batch", "32", "--no-certify", "--json"]) == 0
    capsys.readouterr()
    src.write_text(src.read_text().replace("nb.Relu(), nb.Conv(width)", "nb.Tanh(), nb.Conv(width)"))
    _one_line(capsys, 1, ["train", str(d), "--epochs", "1", "--data", str(folder / "train.npz")],
              "changed since it was rendered")


# -- more than one device, more than one process --------------------------------------------------------

TRAIN = [sys.executable, "-m", "verigrad.cli", "train"]


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_equal_one_process_on_two_devices_bit_for_bit(tmp_path):
    """The MLP trained 16 steps (global batch 32) three ways: one process on one
    device, one process on two (CPU) devices, two processes of one device each
    (jax.distributed, gloo). The two-way runs partition the same program over the
    same numbers: identical parameters, bit for bit. The one-device run sums each
    gradient in another order: equal to float32 rounding."""
    import os
    import subprocess
    from verigrad.render import render
    from verigrad.run import data as digits
    d = render("mlp", tmp_path / "mlp", batch=32, opt="adamw", options={"hidden": [16]})
    s = digits.digits()
    np.savez(tmp_path / "train.npz", x=s.x_train[:256], y=s.y_train[:256], x_test=s.x_test[:64], y_test=s.y_test[:64])
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS",)}
    env.update(JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    common = [str(d), "--data", str(tmp_path / "train.npz"), "--epochs", "2", "--json"]

    def run(*extra, params):
        return subprocess.Popen(TRAIN + common + ["--params", str(tmp_path / params), *extra], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    port = _free_port()
    procs = [run("--num-processes", "2", "--process-id", str(i), "--coordinator", f"127.0.0.1:{port}",
                 params=f"two_processes_{i}.npz") for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p in [run(params="one_device.npz"), run("--devices", "2", params="two_devices.npz")]:
        outs.append(p.communicate(timeout=300))
        assert p.returncode == 0, outs[-1][1][-2000:]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs[:2]]
    summaries = [json.loads(o[0].strip().splitlines()[-1]) for o in outs]
    assert summaries[0]["devices"] == "2 cpu devices over 2 processes" and summaries[0]["steps"] == 16
    assert summaries[1]["params"] is None                  # only process 0 writes
    assert summaries[3]["devices"] == "2 cpu devices"
    assert summaries[0]["loss"] == summaries[1]["loss"] == summaries[3]["loss"]
    one, two, procs2 = (np.load(tmp_path / f) for f in ("one_device.npz", "two_devices.npz", "two_processes_0.npz"))
    assert two.files == procs2.files == one.files and len(one.files) == 4
    for k in one.files:
        assert np.array_equal(two[k], procs2[k]), k                                      # bit for bit
        assert np.max(np.abs(one[k] - two[k])) <= 1e-6 * max(1.0, np.max(np.abs(one[k]))), k
