"""The manifest loader checks the schema and the files, naming the bad field."""
import copy
import json

import pytest

from verigrad.run import backend, manifest


def _obj(ref_dir):
    return json.loads((ref_dir / "manifest.json").read_text())


def test_loads_the_reference(ref):
    assert ref.batch == 64 and ref.optimizer["name"] == "adamw" and ref.classes == 10
    assert [p.role for p in ref.train_step.inputs][-3:] == ["lr", "bias_correction1", "bias_correction2"]
    assert ref.train_step.role("drop_mask")[0].keep == pytest.approx(0.9)
    exe = backend.compile(ref.text(ref.train_step))
    manifest.check_module(ref, ref.train_step, exe.signature, "train_step")


def _edit(obj, path, value):
    o = obj
    for k in path[:-1]:
        o = o[k]
    if value is KeyError:
        del o[path[-1]]
    else:
        o[path[-1]] = value
    return obj


@pytest.mark.parametrize("path, value, match", [
    (["batch"], 0, r"manifest.json: batch: expected an integer >= 1"),
    (["optimizer", "name"], "lion", r"optimizer.name: unknown optimizer 'lion'"),
    (["train_step", "inputs", 3, "shape"], [32, "x"], r"train_step.inputs\[3\].shape: expected a list of integers"),
    (["train_step", "inputs", 2, "role"], "weights", r"train_step.inputs\[2\].role: unknown role 'weights'"),
    (["train_step", "outputs", -1], KeyError, r"train_step.outputs: expected exactly one output of role loss"),
    (["params", 0, "init"], "xavier", r"params\[0\].init: unknown initialiser 'xavier'"),
    (["train_step", "sha256"], "0" * 64, r"train_step.sha256: train_step.mlir has sha256 .* changed after rendering"),
    (["forward", "file"], "missing.mlir", r"forward.file: .*missing.mlir does not exist"),
    (["label_smoothing"], 1.5, r"label_smoothing: expected a number in \[0, 1\)"),
])
def test_bad_fields_are_named(ref_dir, path, value, match):
    obj = _edit(copy.deepcopy(_obj(ref_dir)), path, value)
    with pytest.raises(manifest.ManifestError, match=match):
        manifest.from_dict(obj, ref_dir)


def test_state_outputs_must_match_inputs(ref_dir):
    obj = _obj(ref_dir)
    obj["train_step"]["outputs"][0]["name"] = "params/typo/W"
    with pytest.raises(manifest.ManifestError, match=r"param 'params/fc1/W' has no output of the same name"):
        manifest.from_dict(obj, ref_dir)


def test_mask_shape_must_be_the_batch(ref_dir):
    obj = _obj(ref_dir)
    mask = [k for k, p in enumerate(obj["train_step"]["inputs"]) if p["role"] == "drop_mask"][0]
    obj["train_step"]["inputs"][mask]["shape"] = [32]
    with pytest.raises(manifest.ManifestError, match=rf"train_step.inputs\[{mask}\].shape: a drop mask must have shape \[64\]"):
        manifest.from_dict(obj, ref_dir)


def test_module_disagreeing_with_the_manifest(ref, ref_dir):
    exe = backend.compile(ref.text(ref.forward))
    with pytest.raises(manifest.ManifestError, match="@main takes 8 arguments, train_step.inputs lists"):
        manifest.check_module(ref, ref.train_step, exe.signature, "train_step")


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(manifest.ManifestError, match="no such manifest"):
        manifest.load(tmp_path)
    (tmp_path / "manifest.json").write_text('{"net": "mlp",\n "batch": }')
    with pytest.raises(manifest.ManifestError, match=r"manifest.json:2:11: not valid JSON"):
        manifest.load(tmp_path)
