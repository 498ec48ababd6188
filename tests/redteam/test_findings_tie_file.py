"""Red team RT-47-h4 (helper rt2-h; fixed): tying a rendered directory again
(``verigrad render DIR``, ``render.check``, ``tie_directory`` without a loaded manifest)
tied the files by their fixed names, ``train_step.mlir`` and ``forward.mlir``, while the
manifest's ``train_step.file`` (whose sha256 ``load`` checks) names the file the trainer
and ``predict`` run. Edit: copy an edited step (RT-42's ``1/0`` gate) to ``evil.mlir``,
point ``train_step.file`` at it and pin its sha256: the directory was reported CHECKED,
a verdict about a file that nothing runs. (``ensure_tied`` tied the pinned manifest
files and refused it, so training was not affected.)

Fixed (``render.tie.tie_directory``): the texts tied are always the manifest's files,
read once and pinned, and messages name them.
"""
import json
import shutil

from _tie_edits import edited_head_bias
from test_findings_outside_domain import GATES, _edit, src  # noqa: F401  (the module's fixture)
from verigrad.render import check
from verigrad.run.manifest import sha256_file


def _pointed(src, dst, text_from):  # noqa: F811
    """A copy ``dst`` of ``src`` whose manifest's train step is ``evil.mlir``, a copy of
    ``text_from``'s train step."""
    shutil.copytree(src, dst)
    shutil.copy(text_from / "train_step.mlir", dst / "evil.mlir")
    m = json.loads((dst / "manifest.json").read_text())
    m["train_step"]["file"] = "evil.mlir"
    m["train_step"]["sha256"] = sha256_file(dst / "evil.mlir")
    (dst / "manifest.json").write_text(json.dumps(m))
    return dst


def test_rt47_h4_the_tie_again_ties_the_manifests_file(src, tmp_path):  # noqa: F811
    bad, k = edited_head_bias(src, tmp_path / "bad", _edit(GATES["one_over_zero"]))
    d = _pointed(src, tmp_path / "swap", bad)
    tie = check(d)
    r = tie.modules["train_step"].results[k]
    assert not tie.ok and r.status == "UNKNOWN" and "evil.mlir" in r.reason, r


def test_rt47_h4_an_honest_file_of_another_name_still_ties(src, tmp_path):  # noqa: F811
    d = _pointed(src, tmp_path / "renamed", src)
    assert check(d).ok
