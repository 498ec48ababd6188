"""`verigrad train` on a rendered directory or a net by name: summary line, clean errors, exit codes."""
import json

import pytest

from verigrad.cli import main


@pytest.fixture(scope="module")
def tied_dir(tmp_path_factory):
    """A rendered MLP: `verigrad train DIR` trains only a directory whose tie holds
    (the plain-JAX reference directory has no certified math to tie to)."""
    from verigrad.render import render
    return render("mlp", tmp_path_factory.mktemp("mlp"), batch=64, opt="adamw", options={"hidden": [32]})


def test_trains_and_prints_a_json_summary(tied_dir, tmp_path, capsys):
    ref_dir = tied_dir
    constant = ["--lr", "0.01", "--schedule", "constant", "--ckpt", str(tmp_path)]
    assert main(["train", str(ref_dir), "--epochs", "2", *constant, "--json"]) == 0
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert first["epochs"] == 2 and first["steps"] == 44 and 0 <= first["test_accuracy"] <= 1
    assert main(["train", str(ref_dir), "--epochs", "3", *constant, "--resume"]) == 0   # extended
    out = capsys.readouterr().out
    assert "test accuracy" in out
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["resumed_from_epoch"] == 2 and summary["steps"] == 66


@pytest.mark.parametrize("argv, match, code", [
    (["train", "nonsense"], "neither a rendered directory nor a net", 3),
    (["train", "{ref}", "--batch", "32"], "--batch 32 differs from 64", 3),
    (["train", "{ref}", "--resume"], "--resume needs --ckpt", 2),            # an argument error (docs/cli.md)
    (["train", "{ref}", "--ckpt", "{tmp}", "--resume"], "no checkpoint to resume from", 3),
    (["train", "{ref}", "--epochs", "0"], "--epochs", 2),
])
def test_bad_input_is_one_line_and_exit_3(tied_dir, tmp_path, capsys, argv, match, code):
    argv = [a.format(ref=tied_dir, tmp=tmp_path) for a in argv]
    try:
        got = main(argv)
    except SystemExit as e:             # argparse's own range checks
        got = e.code
    assert got == code
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_divergence_exits_1_naming_the_step(tmp_path, capsys):
    assert main(["train", "reference", "--out", str(tmp_path), "--epochs", "1", "--lr", "1e6", "--schedule", "constant",
                 "--json"]) == 1
    err = capsys.readouterr().err
    assert "at step" in err and "epoch 1" in err and "Traceback" not in err


def test_a_changed_module_is_refused(ref_dir, tmp_path, capsys):
    import shutil
    d = tmp_path / "edited"
    shutil.copytree(ref_dir, d)
    text = (d / "train_step.mlir").read_text()
    (d / "train_step.mlir").write_text(text.replace("stablehlo.subtract", "stablehlo.add", 1))
    assert main(["train", str(d), "--epochs", "1"]) == 3
    assert "train_step.sha256" in capsys.readouterr().err


def test_a_net_by_name_is_rendered_certified_and_tied_then_trained(tmp_path, capsys):
    out = tmp_path / "mlp"
    assert main(["train", "mlp", "--batch", "16", "--opt", "sgd", "--epochs", "1", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["net"] == "mlp" and 0.0 <= summary["test_accuracy"] <= 1.0
    certificates = json.loads((out / "manifest.json").read_text())["certificates"]
    assert {k: v["status"] for k, v in certificates.items()} == {
        "network_backward": "PROVED", "loss_backward": "PROVED", "render_tie": "CHECKED"}
