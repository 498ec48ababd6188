"""`make demo`'s pipeline on a small network: certify, render and tie, train; and the
kernel showcase. Bad arguments exit 2 with a message."""
import json

import pytest

from verigrad import demo


def test_the_pipeline_certifies_ties_and_trains(tmp_path, capsys):
    assert demo.main(["--net", "mlp", "--epochs", "1", "--out", str(tmp_path / "d"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["ok"] and result["tie"] == "CHECKED"
    assert result["certificates"] == {"network_backward": "PROVED", "loss_backward": "PROVED"}
    assert 0.1 < result["test_accuracy"] <= 1.0


def test_the_kernel_showcase_proves_and_refutes(capsys):
    assert demo.main(["--kernel"]) == 0
    out = capsys.readouterr().out
    assert "PROVED" in out and "REFUTED" in out


def test_bad_epochs_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        demo.main(["--epochs", "0"])
    assert e.value.code == 2 and "--epochs must be >= 1" in capsys.readouterr().err
