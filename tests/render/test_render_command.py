"""`verigrad render`: renders and ties a network, ties a directory again, says which
result fails, and turns bad input into one line with exit code 3."""
import json
import shutil

import pytest

from verigrad.cli import main
from verigrad.run.manifest import sha256_file


def test_renders_ties_and_prints_json(tmp_path, capsys):
    out = tmp_path / "mlp"
    assert main(["render", "mlp", "--out", str(out), "--batch", "4", "--opt", "sgd", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["status"] == "CHECKED" and summary["modules"]["train_step"]["checked"] == 5
    assert summary["certificates"] == {"network_backward": "PROVED", "loss_backward": "PROVED", "render_tie": "CHECKED"}
    assert (out / "manifest.json").is_file()
    assert main(["render", str(out)]) == 0
    text = capsys.readouterr().out
    assert "CHECKED" in text and "recorded at render time and not re-checked" in text


def test_tied_again_the_stored_certificates_are_marked_recorded(mlp_dir, tmp_path, capsys):
    """A directory tied again shows the manifest's backward certificates as recorded (a
    planted "PROVED" there is not re-made), and the tie's status is this run's."""
    dst = tmp_path / "planted"
    shutil.copytree(mlp_dir, dst)
    m = json.loads((dst / "manifest.json").read_text())
    m["certificates"]["render_tie"] = {"status": "PROVED"}
    (dst / "manifest.json").write_text(json.dumps(m))
    assert main(["render", str(dst), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["certificates"]["render_tie"] == summary["status"] == "CHECKED"
    assert summary["certificates_recorded"] == ["loss_backward", "network_backward"]


def test_a_failing_tie_exits_1_naming_the_result(mlp_dir, tmp_path, capsys):
    dst = tmp_path / "edited"
    shutil.copytree(mlp_dir, dst)
    path = dst / "train_step.mlir"
    path.write_text(path.read_text().replace("dense<9.990000e-01>", "dense<9.900000e-01>", 1))
    m = json.loads((dst / "manifest.json").read_text())
    m["train_step"]["sha256"] = sha256_file(path)
    (dst / "manifest.json").write_text(json.dumps(m))
    assert main(["render", str(dst), "--json"]) == 1
    captured = capsys.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert summary["status"] == "REFUTED" and summary["failures"][0]["result"] == "params/fc1/W"
    assert "params/fc1/W" in captured.err and "Traceback" not in captured.err


@pytest.mark.parametrize("argv, match, code", [
    (["render", "lenet"], "neither a rendered directory (no such folder) nor a network", 3),
    (["render", "mlp", "--batch", "0"], "argument --batch: must be at least 1, not 0", 2),
    (["render", "mlp", "--drop-path", "1.5"], "argument --drop-path: must be in [0, 1), not 1.5", 2),
    (["render", "mlp", "--clip", "-1"], "argument --clip: must be greater than 0, not -1", 2),
])
def test_bad_input_is_one_line_and_exit_3(tmp_path, capsys, argv, match, code):
    assert main(argv + ["--out", str(tmp_path / "x")]) == code
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
