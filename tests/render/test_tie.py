"""The render tie: every result of a rendered module is CHECKED against the certified
math; an edited file (a transposed weight, a changed constant, a dropped term) is
refuted naming the result and the line; a wrong pairing is refused by the kernel."""
import json
import re
import shutil

import pytest

from verigrad.render import check, pairing, render
from verigrad.run.manifest import ManifestError, load, sha256_file


def test_rendered_steps_are_checked(mlp_dir, vit_dir):
    for directory in (mlp_dir, vit_dir):
        cert = load(directory).certificates["render_tie"]
        assert cert["status"] == "CHECKED"
        step = cert["train_step"]
        assert step["results"] and all(r["status"] == "CHECKED" for r in step["results"].values())
        assert step["obligations"] > 0 and step["cuts"] > 0
    names = list(load(vit_dir).certificates["render_tie"]["train_step"]["results"])
    assert names[0] == "params/embed/W" and "opt/mom/head/b" in names and names[-1] == "loss"


def test_tying_again_from_the_manifest(vit_dir):
    tie = check(vit_dir)
    assert tie.ok and set(tie.modules) == {"train_step", "forward"}
    assert [r.name for r in tie.modules["forward"].results] == ["logits"]


@pytest.mark.parametrize("opt", ["sgd", "momentum"])
def test_every_optimizer_is_checked(tmp_path, opt):
    assert check(render("mlp", tmp_path, batch=4, opt=opt, clip=0.5)).ok


def _edit(src, dst, edit):
    """A copy of ``src`` whose train_step.mlir is edited, the manifest's sha256 updated
    to match (an edit that also fools the hash)."""
    shutil.copytree(src, dst)
    path = dst / "train_step.mlir"
    text = path.read_text()
    new = edit(text)
    assert new != text
    path.write_text(new)
    m = json.loads((dst / "manifest.json").read_text())
    m["train_step"]["sha256"] = sha256_file(path)
    (dst / "manifest.json").write_text(json.dumps(m))
    return dst


def _transpose_first_weight(text):
    return text.replace("contracting_dims = [1] x [0]", "contracting_dims = [1] x [1]", 1)


def _change_beta(text):
    return text.replace("dense<9.990000e-01>", "dense<9.980000e-01>", 1)


def _drop_a_term(text):
    m = re.search(r"(%\d+) = stablehlo.add (%\w+), (%\w+) : (tensor<[^>]*>)", text)
    return text.replace(m.group(0), f"{m.group(1)} = stablehlo.add {m.group(2)}, {m.group(2)} : {m.group(4)}", 1)


@pytest.mark.parametrize("edit, first, line", [
    (_transpose_first_weight, "params/fc1/W", "stablehlo.dot_general"),
    (_change_beta, "params/fc1/W", "stablehlo.multiply"),
    (_drop_a_term, "params/fc1/W", "stablehlo.add"),
])
def test_an_edited_module_is_refuted_naming_the_result(square_mlp_dir, tmp_path, edit, first, line):
    if edit is _change_beta:     # the square MLP trains with SGD; AdamW has the betas
        src = render("mlp", tmp_path / "adamw", batch=8, opt="adamw", options={"hidden": [64]})
    else:
        src = square_mlp_dir
    tie = check(_edit(src, tmp_path / "edited", edit))
    assert not tie.ok and tie.status == "REFUTED"
    failed = [r for _, r in tie.failures()]
    assert failed[0].name == first and failed[0].status == "REFUTED"
    assert re.search(rf"train_step\.mlir:\d+:\d+ {line}", failed[0].reason), failed[0].reason
    assert "differs from the certified math" in tie.summary()
    # the results the edit does not reach stay CHECKED
    assert any(r.status == "CHECKED" for r in tie.modules["train_step"].results) or edit is not _change_beta


def test_an_edit_without_a_new_hash_is_caught_by_the_manifest(mlp_dir, tmp_path):
    dst = tmp_path / "edited"
    shutil.copytree(mlp_dir, dst)
    (dst / "train_step.mlir").write_text(_drop_a_term((dst / "train_step.mlir").read_text()))
    with pytest.raises(ManifestError, match="changed after rendering"):
        check(dst)


def test_a_wrong_pairing_is_refused_by_the_kernel(mlp_dir, monkeypatch):
    """The control for the pairing: pairs are guesses, each checked by the kernel.
    Pair every value with the first text value of its shape instead: the tie must
    not report CHECKED."""
    real_find = pairing.Classes.find

    def wrong(self, a, kind):
        hit = real_find(self, a, kind)
        if hit is None:
            return None
        for key, entries in self.buckets.items():
            if key[0] == a.shape and entries:
                return entries[0][1]
        return hit
    monkeypatch.setattr(pairing.Classes, "find", wrong)
    tie = check(mlp_dir)
    assert not tie.ok and tie.status == "UNKNOWN"
    assert all(r.status in ("CHECKED", "UNKNOWN") for _, r in tie.failures())
    assert "the kernel could not prove" in tie.summary()


def test_a_flat_network_is_checked_value_by_value(tmp_path):
    """The pairing is what makes a deep net cheap: the CNN's step has hundreds of cut
    values, each obligation a few operations."""
    directory = render("cnn", tmp_path, batch=2, opt="adamw", options={"widths": [4, 4]})
    cert = load(directory).certificates["render_tie"]["train_step"]
    assert cert["cuts"] > 100 and all(r["status"] == "CHECKED" for r in cert["results"].values())
