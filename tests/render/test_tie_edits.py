"""The render tie against edited modules (issue 11), and `verigrad train DIR` after it.

Each edit changes what XLA computes while an importer that misread one operation
would have read it as the original: an i32 ``not`` (XLA's ``-1 - x``, once read as
``1 - x``) that turns the first layer's update into gradient ascent, an ``is_finite``
select that freezes it, ``reduce_precision`` to e5m2, f16 and bf16 round trips. The
manifest's sha256 is updated each time, so only the tie stands in the way. The tie
must refuse each (REFUTED or UNKNOWN, naming the operation and its line), and must
still refuse each when the importer's old, wrong reading is put back: XLA runs the
text and disagrees with the certified math. `verigrad train DIR` refuses every edited
directory in one line. Then edits a red team would try: a flipped optimizer sign, a
transposed square weight, an off-by-one slice, a negated logit."""
import dataclasses
import json
import re
import shutil
from fractions import Fraction

import pytest

from verigrad.cli import main
from verigrad.frontends import stablehlo_rules as R
from verigrad.render import check
from verigrad.render.tie import NotTied, ensure_tied
from verigrad.run.manifest import load, sha256_file

W1 = "tensor<64x128xf32>"           # the MLP's first weight (params/fc1/W, argument 0 and result 0)


def edited(src, dst, edit, file="train_step.mlir"):
    """A copy of the rendered ``src`` whose ``file`` is edited, with the manifest's
    sha256 updated to match (an edit that also fools the hash)."""
    shutil.copytree(src, dst)
    path = dst / file
    text = path.read_text()
    new = edit(text)
    assert new != text
    path.write_text(new)
    m = json.loads((dst / "manifest.json").read_text())
    m[file.split(".")[0]]["sha256"] = sha256_file(path)
    (dst / "manifest.json").write_text(json.dumps(m))
    return dst


def on_first_result(lines):
    """An edit of ``@main``'s first result (``params/fc1/W``'s new value): ``lines(new)``
    computes the replacement as ``%edit``, inserted before the return."""
    def edit(text):
        ret = max(re.finditer(r"^(\s*)return (%[\w#]+)(.*)$", text, re.M), key=lambda m: m.group(0).count("%"))
        indent, new = ret.group(1), ret.group(2)
        body = "".join(f"{indent}{line}\n" for line in lines(new))
        return text[:ret.start()] + body + f"{indent}return %edit{ret.group(3)}" + text[ret.end():]
    return edit


def _not_ascent(new):
    """``W1 + (new - W1) * f`` with ``f = float(not 0 : i32)``: XLA's -1, so ``2 W1 - new``,
    gradient ascent; read as ``1 - x`` it was ``new``."""
    return ["%e0 = stablehlo.constant dense<0> : tensor<i32>",
            "%e1 = stablehlo.not %e0 : tensor<i32>",
            "%e2 = stablehlo.convert %e1 : (tensor<i32>) -> tensor<f32>",
            f"%e3 = stablehlo.broadcast_in_dim %e2, dims = [] : (tensor<f32>) -> {W1}",
            f"%e4 = stablehlo.subtract {new}, %arg0 : {W1}",
            f"%e5 = stablehlo.multiply %e4, %e3 : {W1}",
            f"%edit = stablehlo.add %arg0, %e5 : {W1}"]


def _is_finite_freeze(new):
    """``select(is_finite(log 0), new, W1)``: XLA keeps W1 (frozen); read as 1, ``new``."""
    return ["%e0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
            "%e1 = stablehlo.log %e0 : tensor<f32>",
            "%e2 = stablehlo.is_finite %e1 : (tensor<f32>) -> tensor<i1>",
            f"%edit = stablehlo.select %e2, {new}, %arg0 : tensor<i1>, {W1}"]


def _e5m2(new):
    return [f"%edit = stablehlo.reduce_precision {new}, format = e5m2 : {W1}"]


def _round_trip(dtype):
    narrow = W1.replace("f32", dtype)
    return lambda new: [f"%e0 = stablehlo.convert {new} : ({W1}) -> {narrow}",
                        f"%edit = stablehlo.convert %e0 : ({narrow}) -> {W1}"]


EDITS = {"not_ascent": (_not_ascent, "stablehlo.not"),
         "is_finite_freeze": (_is_finite_freeze, "stablehlo.is_finite"),
         "reduce_precision_e5m2": (_e5m2, "stablehlo.reduce_precision"),
         "f16_round_trip": (_round_trip("f16"), "stablehlo.convert"),
         "bf16_round_trip": (_round_trip("bf16"), "stablehlo.convert")}


@pytest.fixture(scope="module")
def edited_dirs(mlp_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("edits")
    return {name: edited(mlp_dir, root / name, on_first_result(lines)) for name, (lines, _) in EDITS.items()}


def _first_failure(tie):
    failed = dict((r.name, r) for _, r in tie.failures())
    assert "params/fc1/W" in failed, tie.summary()
    return failed["params/fc1/W"]


@pytest.mark.parametrize("name", sorted(EDITS))
def test_each_audit_edit_is_refused(edited_dirs, name):
    tie = check(edited_dirs[name])
    assert not tie.ok and tie.status in ("REFUTED", "UNKNOWN")
    r = _first_failure(tie)
    assert r.status == "REFUTED", r.reason           # XLA computes something else: a counterexample
    op = EDITS[name][1]
    if name == "not_ascent":
        # read as XLA computes it (-1 - x), the text differs from the math at the random point already
        assert "differs from the certified math at random inputs" in r.reason
    else:
        # the importer refuses the operation, naming it and its line; XLA shows the difference
        assert re.search(rf"the importer refuses the text: \S*train_step\.mlir:\d+:\d+: {re.escape(op)}: ", r.reason), \
            r.reason
        assert "XLA's execution of the text differs" in r.reason
    # results the edit does not touch: nothing is claimed of them when the text is refused
    assert all(x.status in ("CHECKED", "REFUTED", "UNKNOWN") for x in tie.modules["train_step"].results)


def _old_readings(monkeypatch):
    """The importer as the audit found it: ``not`` of an i32 as ``1 - x``, ``is_finite``
    as 1, ``reduce_precision`` and every ``convert`` as the identity."""
    def put(name, fn):
        monkeypatch.setitem(R.RULES, name, dataclasses.replace(R.RULES[name], fn=fn))
    put("stablehlo.not", lambda op, x: 1 - x)
    put("stablehlo.is_finite", lambda op, x: R.splat(Fraction(1), op.out.shape))
    put("stablehlo.reduce_precision", lambda op, x: x)
    put("stablehlo.convert", lambda op, x: x)


@pytest.mark.parametrize("name", sorted(EDITS))
def test_xla_refutes_each_edit_an_importer_misreads(edited_dirs, monkeypatch, name):
    """The tie's second check: with the importer's old readings the kernel would
    CHECK each edited module; XLA's execution of the text refutes it."""
    _old_readings(monkeypatch)
    tie = check(edited_dirs[name])
    r = _first_failure(tie)
    assert r.status == "REFUTED" and "XLA's execution of the text differs from the certified math" in r.reason, \
        r.reason
    assert "the kernel checked the importer's reading" in r.reason
    xla = tie.modules["train_step"].xla
    assert xla["status"] == "REFUTED" and xla["draws"] >= 2


def test_the_unedited_module_still_ties_with_the_old_readings(mlp_dir, monkeypatch):
    """The control for the test above: XLA agrees with the unedited text."""
    _old_readings(monkeypatch)
    tie = check(mlp_dir)
    assert tie.ok, tie.summary()
    for rep in tie.modules.values():
        assert rep.xla["status"] == "AGREES" and rep.xla["max_error"] < 1e-5


@pytest.mark.parametrize("name", sorted(EDITS))
def test_train_refuses_each_edited_directory(edited_dirs, capsys, name):
    assert main(["train", str(edited_dirs[name]), "--epochs", "1", "--json"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "the render tie of these files failed, so they are not trained" in err and "params/fc1/W" in err
    assert not out.strip()                       # nothing trained, no summary


def test_ensure_tied_pins_the_bytes_it_tied(mlp_dir, tmp_path):
    d = tmp_path / "copy"
    shutil.copytree(mlp_dir, d)
    m = ensure_tied(d)
    tied = m.text(m.train_step)
    (d / "train_step.mlir").write_text(_not_ascent_text(tied))     # changed after the tie
    assert m.text(m.train_step) == tied          # the trainer gets the bytes that were tied
    with pytest.raises(NotTied, match="train_step.sha256"):
        ensure_tied(d)


def _not_ascent_text(text):
    return on_first_result(_not_ascent)(text)


def test_a_directory_not_rendered_by_verigrad_is_not_trained(tmp_path, capsys):
    from verigrad.run import reference
    d = reference.write(tmp_path / "ref", batch=8, hidden=4)
    with pytest.raises(NotTied, match="not rendered by `verigrad render`"):
        ensure_tied(d)
    assert main(["train", str(d), "--epochs", "1"]) == 1
    err = capsys.readouterr().err
    assert "only tied text is trained" in err and len(err.strip().splitlines()) == 1


# -- a red team's edits -----------------------------------------------------------------------------

def _flip_optimizer_sign(text):
    """``W1 - update`` becomes ``W1 + update``."""
    ret = max(re.finditer(r"^\s*return (%[\w#]+)", text, re.M), key=lambda m: len(m.group(0)))
    new = ret.group(1)
    line = re.search(rf"^(\s*){re.escape(new)} = stablehlo\.subtract %arg0, (%\w+)", text, re.M)
    return text.replace(line.group(0), f"{line.group(1)}{new} = stablehlo.add %arg0, {line.group(2)}", 1)


def _transpose_square_weight(text):
    """The 64 x 64 first weight transposed before its first use (same types)."""
    m = re.search(r"^(\s*)(%\d+) = stablehlo\.dot_general (%\w+), %arg0,", text, re.M)
    t = "tensor<64x64xf32>"
    return text.replace(m.group(0), f"{m.group(1)}%wt = stablehlo.transpose %arg0, dims = [1, 0] : ({t}) -> {t}\n"
                                     f"{m.group(1)}{m.group(2)} = stablehlo.dot_general {m.group(3)}, %wt,", 1)


def _off_by_one_slice(text):
    """The ViT's class-token slice ``[0:1]`` moved to ``[1:2]`` (the first patch)."""
    return text.replace("[0:4, 0:1, 0:16]", "[0:4, 1:2, 0:16]", 1)


def _negate_logits(text):
    return on_first_result(lambda new: [f"%edit = stablehlo.negate {new} : tensor<4x10xf32>"])(text)


@pytest.mark.parametrize("fixture, edit, file", [
    ("mlp_dir", _flip_optimizer_sign, "train_step.mlir"),
    ("square_mlp_dir", _transpose_square_weight, "train_step.mlir"),
    ("vit_dir", _off_by_one_slice, "train_step.mlir"),
    ("vit_dir", _negate_logits, "forward.mlir"),
])
def test_a_red_teams_edits_are_not_checked(request, tmp_path, fixture, edit, file):
    tie = check(edited(request.getfixturevalue(fixture), tmp_path / "edited", edit, file))
    assert not tie.ok and tie.status in ("REFUTED", "UNKNOWN"), tie.summary()
    key = file.split(".")[0]
    assert any(r.status != "CHECKED" for r in tie.modules[key].results)


def test_every_rendered_network_still_ties(mlp_dir, square_mlp_dir, vit_dir):
    """The unedited modules: CHECKED, XLA agreeing to float32 rounding."""
    for d in (mlp_dir, square_mlp_dir, vit_dir):
        cert = load(d).certificates["render_tie"]
        assert cert["status"] == "CHECKED"
        for key in ("train_step", "forward"):
            xla = cert[key]["xla_check"]
            assert xla["status"] == "AGREES" and xla["draws"] >= 2 and xla["max_error"] < 1e-5, xla
