"""``verigrad html``: the site from the command line, precomputed certificates, and
bad input as one line with exit code 3 (in this process: ``verigrad.cli.main``)."""
import json
import os
import subprocess
import sys

import pytest

from verigrad.cli import main


def html(*args, cache=None):
    env = dict(os.environ)
    if cache is not None:
        env["VERIGRAD_CACHE"] = str(cache)
    return subprocess.run([sys.executable, "-m", "verigrad.cli", "html", *args], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def records_file(tmp_path_factory):
    """Certificate records as a site writes them (here: one layer, made up)."""
    path = tmp_path_factory.mktemp("records") / "certificates.json"
    path.write_text(json.dumps([{"kind": "layer", "name": "relu", "status": "PROVED", "wrt": {"x": "PROVED"},
                                 "axioms": ["ring"], "sizes": ["B", "d"], "seconds": 0.1, "float32_error": 0.0,
                                 "statement": "|- x = x", "latex": r"\vdash x = x"}]))
    return path


def test_writes_a_site_for_some_theorems_with_precomputed_certificates(tmp_path, records_file):
    out = tmp_path / "site"
    r = html("--out", str(out), "softmax.*", "--certificates-from", str(records_file), "--json", cache=tmp_path / "c")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["index"] == (out / "index.html").resolve().as_uri()
    assert summary["certificates"] == {"PROVED": 1} and set(summary["theorems"]) == {"proved"}
    pages = sorted(p.name for p in (out / "theorems").iterdir())
    assert pages and all(p.startswith("softmax.") for p in pages)
    assert (out / "certificates" / "layer-relu.html").is_file()
    # the site's own records read back: a second build from them
    again = html("--out", str(out), "softmax.rows", "--certificates-from", str(out / "certificates.json"),
                 cache=tmp_path / "c")
    assert again.returncode == 0, again.stderr
    assert "wrote" in again.stdout and [p.name for p in (out / "theorems").iterdir()] == ["softmax.rows.html"]


def test_no_certificates(tmp_path, capsys):
    assert main(["html", "--out", str(tmp_path / "s"), "matrix.trace_cyclic", "--no-certificates"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert "This build has no certificates" in (tmp_path / "s" / "certificates.html").read_text()


@pytest.mark.parametrize("make, args, message", [
    (None, ["--layers", "dense,nope"], "--layers: no layer 'nope' (known: "),
    (None, ["--networks", "resnet50"], "--networks: no network 'resnet50'"),
    (None, ["no.such.theorem"], "no theorem matches 'no.such.theorem'"),
    (None, ["--jobs", "0"], "argument --jobs/-j: must be at least 1, not 0"),
    ("x.json", ["--certificates-from", "{path}"], "cannot read it"),
    ("bad.json", ["--certificates-from", "{path}"], "not JSON"),
    ("list.json", ["--certificates-from", "{path}"], "record 1 has no name, status"),
    ("status.json", ["--certificates-from", "{path}"], "record 0 (relu) has status 'GREAT'"),
    ("file", ["--out", "{path}"], "exists and is not a folder"),
])
def test_bad_input_is_one_line_and_exit_code_three(tmp_path, capsys, make, args, message):
    path = tmp_path / (make or "unused")
    contents = {"bad.json": "[{", "list.json": '[{"kind": "rule", "name": "a", "status": "PROVED"}, {"kind": "x"}]',
                "status.json": '[{"kind": "layer", "name": "relu", "status": "GREAT"}]', "file": "not a folder"}
    if make in contents:
        path.write_text(contents[make])
    args = [a.replace("{path}", str(path)) for a in args]
    if "--out" not in args:
        args = ["--out", str(tmp_path / "site")] + args
    assert main(["html", *args]) == (2 if "--jobs" in args else 3)      # an argument error, or bad input
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
