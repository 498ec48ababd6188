"""The command-line contract (docs/cli.md), one bad input per row, each run through the
real ``verigrad`` command in a process of its own (``python -m verigrad.cli``, forked from
a process that has imported JAX and nothing of verigrad: ``forked_cli.py``; a forked run
is checked against a fresh one below):

- exit code 2 for an argument error (a command line that cannot be run as given: an
  unknown option, a value out of its range, options that do not go together), 3 for
  bad input (a file or folder that is missing, unreadable or cannot be written, a name
  that is not there);
- stderr is exactly one line, naming the problem (the row's ``says``), no traceback;
- stdout is empty (no half report), and nothing is lost: the files in the working
  folder are the same afterwards, unchanged, and nothing was written beside them (the
  paths are checked before any work).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import forked_cli

ROOT = Path(__file__).resolve().parents[2]

GOOD_VJP = '''
import jax, jax.numpy as jnp

@jax.custom_vjp
def square(x):
    return x * x

def fwd(x):
    return square(x), x

def bwd(x, dy):
    return (2 * x * dy,)

square.defvjp(fwd, bwd)

def plain(x):
    return x * x
'''


def _truncated_checkpoint() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, a0=np.zeros((64, 64), np.float32), __meta__=np.frombuffer(b'{"names": ["w"]}', np.uint8))
    data = buf.getvalue()
    return data[: len(data) // 2]


def _manifest_only() -> bytes:
    return b"{}"


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


_IMAGES = np.zeros((40, 8, 8, 1), np.float32)
_NAN = _IMAGES.copy()
_NAN[2, 3, 4, 0] = np.nan


# Files made in the working folder before each case (path -> content).
FILES = {
    "afile": b"a file, not a folder\n",
    "keep.txt": b"must survive every bad command\n",
    "emptydir/.keep": b"",
    "mlp/.keep": b"",                                  # a folder named like a net: `train mlp` means the net
    "good.py": GOOD_VJP.encode(),
    "broken.py": b"def f(x:\n    return x\n",
    "raises.py": b"raise RuntimeError('boom at import')\n",
    "notes.txt": b"not python\n",
    "ck/checkpoint.npz": None,                         # filled with a truncated checkpoint
    "ckempty/.keep": b"",
    "rendered/manifest.json": b"{}",                   # looks rendered; the manifest is not valid
    "notjson.json": b"{not json",
    "list.json": b'[{"kind": "layer", "name": "dense", "status": "MAYBE"}]',
    # --data (verigrad.run.dataset) and predict
    "x.npz": _npz(x=_IMAGES),
    "nan.npz": _npz(x=_NAN, y=np.zeros(40, np.int64)),
    "halves.npz": _npz(x=_IMAGES, y=np.full(40, 0.5)),
    "nolabels.npz": _npz(x=_IMAGES),
    "params.npz": _npz(w=np.zeros(3, np.float32)),
}


@dataclass
class Case:
    id: str
    argv: list
    code: int
    says: str                     # a fragment of the one line on stderr (case-insensitive)
    owner: str = ""               # who owns the command's internals, when it is not the CLI layer
    env: dict = field(default_factory=dict)


A, B = 2, 3      # argument error, bad input

CASES = [
    # -- the top-level parser ---------------------------------------------------------------
    Case("top-unknown-command", ["nope"], A, "invalid choice"),
    Case("top-unknown-option", ["--bogus"], A, "unrecognized arguments"),
    Case("top-missing-target", ["train"], A, "required"),
    Case("top-option-of-another-command", ["verify", "--epochs", "3"], A, "unrecognized arguments: --epochs"),
    Case("top-typo-in-option", ["certificates", "--jsn"], A, "unrecognized arguments: --jsn"),

    # -- certify (its internals: verigrad/certify/command.py) -------------------------------
    Case("certify-missing-file", ["certify", "missing.py:f", "--shape", "x=n"], B, "no such file", "certify"),
    Case("certify-not-python", ["certify", "notes.txt:f", "--shape", "x=n"], B, "not a Python file", "certify"),
    Case("certify-no-name", ["certify", "good.py:nothing", "--shape", "x=n"], B, "nothing", "certify"),
    Case("certify-not-custom-vjp", ["certify", "good.py:plain", "--shape", "x=n"], B, "custom_vjp", "certify"),
    Case("certify-syntax-error", ["certify", "broken.py:f", "--shape", "x=n"], B, "syntax error", "certify"),
    Case("certify-import-raises", ["certify", "raises.py:f", "--shape", "x=n"], B, "boom at import", "certify"),
    Case("certify-shape-negative", ["certify", "good.py:square", "--shape", "x=-1,d"], A, "-1", "certify"),
    Case("certify-shape-may-be-negative", ["certify", "good.py:square", "--shape", "x=n-5,d"], A, "n-5", "certify"),
    Case("certify-shape-unknown-dtype", ["certify", "good.py:square", "--shape", "x=n:float16"], A, "float16",
         "certify"),
    Case("certify-shape-without-equals", ["certify", "good.py:square", "--shape", "xn"], A, "ARG=DIMS", "certify"),
    Case("certify-shape-of-no-argument", ["certify", "good.py:square", "--shape", "y=n"], B, "'y'", "certify"),
    Case("certify-no-shape", ["certify", "good.py:square"], B, "--shape", "certify"),
    Case("certify-timeout-zero", ["certify", "good.py:square", "--shape", "x=n", "--timeout", "0"], A,
         "--timeout", "certify"),
    Case("certify-timeout-negative", ["certify", "good.py:square", "--shape", "x=n", "--timeout", "-5"], A,
         "--timeout", "certify"),
    Case("certify-timeout-not-a-number", ["certify", "good.py:square", "--shape", "x=n", "--timeout", "abc"], A,
         "abc", "certify"),
    Case("certify-proof-unwritable", ["certify", "good.py:square", "--shape", "x=n", "--proof", "afile/p.json"], B,
         "afile", "certify"),

    # -- verify -------------------------------------------------------------------------------
    Case("verify-no-such-theorem", ["verify", "no_such_theorem_anywhere"], B, "no theorem matches"),
    Case("verify-jobs-zero", ["verify", "--jobs", "0"], A, "--jobs"),
    Case("verify-jobs-not-a-number", ["verify", "--jobs", "x"], A, "--jobs"),
    Case("verify-axioms-of-nothing", ["verify", "--axioms", "no_such_theorem_anywhere"], B, "no theorem"),
    Case("verify-missing-file", ["verify", "missing_theorem.py"], B, "missing_theorem.py"),
    Case("verify-proofs-is-a-file", ["verify", "softmax.sums_to_one", "--proofs", "afile"], B, "afile"),
    Case("verify-proofs-under-a-file", ["verify", "softmax.sums_to_one", "--proofs", "afile/traces"], B, "afile"),
    Case("verify-proofs-unwritable", ["verify", "softmax.sums_to_one", "--proofs", "/sys/verigrad/t"], B,
         "/sys/verigrad/t"),

    # -- certificates ---------------------------------------------------------------------------
    Case("certificates-unknown-part", ["certificates", "--only", "everything"], A, "everything"),
    Case("certificates-unknown-layer", ["certificates", "--layers", "dense,no_such_layer"], B, "no_such_layer"),
    Case("certificates-unknown-net", ["certificates", "--nets", "no_such_net"], B, "no_such_net"),
    Case("certificates-proofs-is-a-file", ["certificates", "--only", "layers", "--layers", "dense", "--proofs",
                                           "afile"], B, "afile"),
    Case("certificates-proofs-unwritable", ["certificates", "--only", "layers", "--layers", "dense", "--proofs",
                                            "/sys/verigrad/p"], B, "/sys/verigrad/p"),

    # -- render -----------------------------------------------------------------------------------
    Case("render-unknown-target", ["render", "no_such_net"], B, "no_such_net"),
    Case("render-folder-without-manifest", ["render", "emptydir"], B, "emptydir"),
    Case("render-batch-zero", ["render", "mlp", "--batch", "0"], A, "--batch"),
    Case("render-batch-not-a-number", ["render", "mlp", "--batch", "x"], A, "--batch"),
    Case("render-drop-path-one", ["render", "mlp", "--drop-path", "1"], A, "--drop-path"),
    Case("render-drop-path-negative", ["render", "mlp", "--drop-path", "-0.1"], A, "--drop-path"),
    Case("render-clip-zero", ["render", "mlp", "--clip", "0"], A, "--clip"),
    Case("render-label-smoothing-too-big", ["render", "mlp", "--label-smoothing", "1.5"], A, "--label-smoothing"),
    Case("render-weight-decay-negative", ["render", "mlp", "--weight-decay", "-1"], A, "--weight-decay"),
    Case("render-unknown-optimizer", ["render", "mlp", "--opt", "adam"], A, "--opt"),
    Case("render-out-is-a-file", ["render", "mlp", "--out", "afile"], B, "afile"),
    Case("render-out-under-a-file", ["render", "mlp", "--out", "afile/mlp"], B, "afile"),
    Case("render-out-unwritable", ["render", "mlp", "--out", "/sys/verigrad/mlp"], B, "/sys/verigrad/mlp"),
    Case("render-missing-network-file", ["render", "missing_net.py:net"], B, "missing_net.py"),
    Case("render-options-for-a-rendered-dir", ["render", "rendered", "--batch", "32"], A, "--batch"),
    Case("render-broken-manifest", ["render", "rendered"], B, "manifest"),

    # -- train ------------------------------------------------------------------------------------
    Case("train-devices-zero", ["train", "mlp", "--devices", "0"], A, "--devices"),
    Case("train-devices-negative", ["train", "mlp", "--devices", "-2"], A, "--devices"),
    Case("train-batch-zero", ["train", "mlp", "--batch", "0"], A, "--batch"),
    Case("train-lr-negative", ["train", "mlp", "--lr", "-1"], A, "--lr"),
    Case("train-lr-zero", ["train", "mlp", "--lr", "0"], A, "--lr"),
    Case("train-lr-not-finite", ["train", "mlp", "--lr", "nan"], A, "--lr"),
    Case("train-epochs-zero", ["train", "mlp", "--epochs", "0"], A, "--epochs"),
    Case("train-drop-path-one", ["train", "mlp", "--drop-path", "1"], A, "--drop-path"),
    Case("train-seed-negative", ["train", "mlp", "--seed", "-1"], A, "--seed"),
    Case("train-resume-without-ckpt", ["train", "mlp", "--resume"], A, "--ckpt"),
    Case("train-params-suffix", ["train", "mlp", "--params", "weights.txt"], A, "--params"),
    Case("train-unknown-target", ["train", "no_such_net"], B, "no_such_net"),
    Case("train-a-file", ["train", "afile"], B, "afile"),
    Case("train-folder-without-manifest", ["train", "emptydir"], B, "emptydir"),
    Case("train-ckpt-is-a-file", ["train", "mlp", "--ckpt", "afile"], B, "afile"),
    Case("train-ckpt-under-a-file", ["train", "mlp", "--ckpt", "afile/ck"], B, "afile"),
    Case("train-ckpt-unwritable", ["train", "mlp", "--ckpt", "/sys/verigrad/ck"], B, "/sys/verigrad/ck"),
    Case("train-resume-truncated", ["train", "mlp", "--ckpt", "ck", "--resume"], B, "unreadable checkpoint"),
    Case("train-resume-nothing-there", ["train", "mlp", "--ckpt", "ckempty", "--resume"], B, "no checkpoint"),
    Case("train-out-is-a-file", ["train", "mlp", "--out", "afile"], B, "afile"),
    Case("train-out-for-a-directory", ["train", "rendered", "--out", "elsewhere"], A, "--out"),
    Case("train-params-under-a-file", ["train", "mlp", "--params", "afile/p.npz"], B, "afile"),
    Case("train-broken-manifest", ["train", "rendered"], B, "manifest"),

    # -- train: your network (verigrad.nn.builder) and your data (verigrad.run.dataset) ----------
    Case("train-data-missing", ["train", "mlp", "--data", "missing.npz"], B, "missing.npz", "run"),
    Case("train-data-not-arrays", ["train", "mlp", "--data", "notes.txt"], B, "notes.txt", "run"),
    Case("train-data-without-labels", ["train", "mlp", "--data", "nolabels.npz"], B, "no array 'y'", "run"),
    Case("train-data-nan", ["train", "mlp", "--data", "nan.npz"], B, "NaN", "run"),
    Case("train-data-labels-not-whole", ["train", "mlp", "--data", "halves.npz"], B, "not a whole number", "run"),
    Case("train-test-without-data", ["train", "mlp", "--test", "x.npz"], A, "--test", "run"),
    Case("train-processes-without-coordinator", ["train", "mlp", "--num-processes", "2"], A, "--coordinator", "run"),
    Case("train-process-id-alone", ["train", "mlp", "--process-id", "1"], A, "--num-processes", "run"),
    Case("train-gpu-without-one", ["train", "mlp", "--device", "gpu"], B, "no GPU", "run"),
    Case("train-network-file-syntax-error", ["train", "broken.py:net"], B, "SyntaxError", "run"),
    Case("train-network-file-raises", ["train", "raises.py:net"], B, "boom at import", "run"),
    Case("train-network-file-no-such-name", ["train", "good.py:nothing"], B, "nothing", "run"),
    Case("train-network-file-not-a-network", ["train", "good.py:square"], B, "not a network", "run"),

    # -- predict ----------------------------------------------------------------------------------
    Case("predict-no-data", ["predict", "rendered"], A, "--data", "run"),
    Case("predict-out-suffix", ["predict", "rendered", "--data", "x.npz", "--out", "p.txt"], A, "--out", "run"),
    Case("predict-not-rendered", ["predict", "emptydir", "--data", "x.npz"], B, "emptydir", "run"),
    Case("predict-data-missing", ["predict", "rendered", "--data", "missing.npz"], B, "missing.npz", "run"),
    Case("predict-data-nan", ["predict", "rendered", "--data", "nan.npz"], B, "NaN", "run"),
    Case("predict-params-missing", ["predict", "rendered", "--data", "x.npz", "--params", "missing.safetensors"], B,
         "missing.safetensors", "run"),
    Case("predict-no-trained-params", ["predict", "rendered", "--data", "x.npz"], B, "params.safetensors", "run"),
    Case("predict-broken-manifest", ["predict", "rendered", "--data", "x.npz", "--params", "params.npz"], B,
         "manifest", "run"),

    # -- html ------------------------------------------------------------------------------------
    Case("html-no-out", ["html"], A, "--out"),
    Case("html-out-is-a-file", ["html", "--out", "afile", "--no-certificates"], B, "afile"),
    Case("html-out-under-a-file", ["html", "--out", "afile/site", "--no-certificates"], B, "afile"),
    Case("html-out-unwritable", ["html", "--out", "/sys/verigrad/site", "--no-certificates"], B,
         "/sys/verigrad/site"),
    Case("html-jobs-zero", ["html", "--out", "site", "--jobs", "0"], A, "--jobs"),
    Case("html-unknown-layer", ["html", "--out", "site", "--layers", "no_such_layer"], B, "no_such_layer"),
    Case("html-unknown-network", ["html", "--out", "site", "--networks", "no_such_net"], B, "no_such_net"),
    Case("html-no-such-theorem", ["html", "--out", "site", "no_such_theorem_anywhere"], B, "no theorem matches"),
    Case("html-certificates-missing", ["html", "--out", "site", "--certificates-from", "missing.json"], B,
         "missing.json"),
    Case("html-certificates-not-json", ["html", "--out", "site", "--certificates-from", "notjson.json"], B,
         "not JSON"),
    Case("html-certificates-bad-status", ["html", "--out", "site", "--certificates-from", "list.json"], B, "MAYBE"),
    Case("html-two-sources", ["html", "--out", "site", "--no-certificates", "--certificates-from", "list.json"], A,
         "not allowed with"),

    # -- check ------------------------------------------------------------------------------------
    Case("check-no-trace", ["check"], A, "required"),
    Case("check-missing-trace", ["check", "missing.trace.json"], B, "missing.trace.json"),
    Case("check-a-folder", ["check", "emptydir"], B, "emptydir"),
]


def _setup(folder: Path):
    for rel, content in FILES.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_truncated_checkpoint() if content is None else content)


def _snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*")) if "__pycache__" not in p.parts}


def _environment(env=None):
    environment = dict(os.environ, JAX_PLATFORMS="cpu", VERIGRAD_WITNESS="0", COLUMNS="80",
                       PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    environment.update(env or {})
    return environment


def run_cli(argv, cwd, env=None):
    """The command in a fresh process."""
    return subprocess.run([sys.executable, "-m", "verigrad.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          env=_environment(env), timeout=300)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = forked_cli.Server(_environment(), tmp_path_factory.mktemp("forked_cli"))
    yield s
    s.close()


def run_forked(server, argv, cwd, env=None):
    """The command in a process forked from ``server`` (a fresh one where the case sets
    environment variables, which the server's import of JAX would not have seen)."""
    return run_cli(argv, cwd, env) if env else server.run(argv, cwd)


def test_there_are_enough_cases_across_all_commands():
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
    commands = {c.argv[0] for c in CASES if not c.id.startswith("top-")}
    assert {"certify", "verify", "certificates", "render", "train", "predict", "html", "check"} <= commands
    assert {c.code for c in CASES} == {2, 3}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_with_its_exit_code(case, tmp_path, server):
    _setup(tmp_path)
    before = _snapshot(tmp_path)
    r = run_forked(server, case.argv, tmp_path, case.env)
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr, r.stderr
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{r.stderr}"
    assert r.returncode == case.code, (r.returncode, r.stderr)
    line = lines[0]
    assert line.startswith("verigrad") and "error:" in line, line
    assert case.says.lower() in line.lower(), line
    assert r.stdout == "", r.stdout
    after = _snapshot(tmp_path)
    assert after == before, f"files changed: {sorted(set(after) ^ set(before))}"


def test_the_helper_of_the_contract_itself_can_fail(tmp_path):
    """A good command passes none of the contract's error checks (so they test something)."""
    _setup(tmp_path)
    r = run_cli(["--version"], tmp_path)
    assert r.returncode == 0 and r.stderr == "" and r.stdout.startswith("verigrad ")
    assert _truncated_checkpoint()[:2] == b"PK" and not zipfile.is_zipfile(io.BytesIO(_truncated_checkpoint()))


# Cases whose command imports JAX and the command's modules (render, train with data,
# predict, html, certificates), one that returns before it, and a good command.
SAME_BOTH_WAYS = ["render-batch-zero", "train-data-nan", "predict-data-missing", "html-unknown-network",
                  "certificates-unknown-net", "certify-shape-of-no-argument", "train-lr-zero"]


def test_a_forked_run_is_a_fresh_run(tmp_path, server):
    """The harness: a command forked from the server gives the exit code, stdout and
    stderr a fresh process gives, and so does one that succeeds and prints."""
    _setup(tmp_path)
    by_id = {c.id: c for c in CASES}
    for argv in [by_id[i].argv for i in SAME_BOTH_WAYS] + [["--version"], ["certify", "--help"]]:
        fresh, forked = run_cli(argv, tmp_path), server.run(argv, tmp_path)
        assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr), \
            argv
    assert server.run(["--version"], tmp_path).stdout.startswith("verigrad ")
