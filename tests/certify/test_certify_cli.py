"""The command-line contract: the last line is one word, the exit code says the same,
--json gives the documented fields, and bad input is one line on stderr with exit code 3."""
import json
import subprocess
import sys
import textwrap

import pytest

from certify_examples import EXAMPLES
from verigrad.cli import main

DENSE = [str(EXAMPLES / "dense.py") + ":dense", "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m"]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "verigrad.cli", "certify", *args], capture_output=True, text=True)


def test_proved_report_ends_with_the_word_and_exit_code_0():
    r = cli(*DENSE)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "PROVED"
    assert any("dx = J^T dy" in line and "PROVED" in line for line in lines)


def test_refuted_report_shows_the_counterexample_and_exit_code_1(tmp_path):
    bug = tmp_path / "dense_bug.py"
    bug.write_text((EXAMPLES / "dense.py").read_text().replace("jnp.sum(dy, axis=0)", "jnp.mean(dy, axis=0)"))
    r = cli(str(bug) + ":dense", *DENSE[1:])
    assert r.returncode == 1, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "REFUTED"
    assert any(line.startswith("counterexample:") and "b[" in line for line in lines)


ROWMAX = """
import jax
import jax.numpy as jnp


@jax.custom_vjp
def rowmax(x):
    return jnp.max(x, axis=-1)


rowmax.defvjp(lambda x: (rowmax(x), x),
              lambda x, dm: (dm[:, None] * (x == jnp.max(x, -1, keepdims=True)),))
"""


def test_unknown_is_exit_code_2_with_json_fields(tmp_path, capsys):
    f = tmp_path / "rowmax.py"
    f.write_text(ROWMAX)
    assert main(["certify", f"{f}:rowmax", "--shape", "x=n,d", "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    for key in ("status", "wrt", "axioms", "side_conditions", "counterexample", "seconds"):
        assert key in out
    assert out["status"] == "UNKNOWN" and out["wrt"] == {"x": "UNKNOWN"} and out["counterexample"] is None


def test_json_counterexample_fields(tmp_path, capsys):
    bug = tmp_path / "dense_bug.py"
    bug.write_text((EXAMPLES / "dense.py").read_text().replace("jnp.sum(dy, axis=0)", "jnp.mean(dy, axis=0)"))
    assert main(["certify", str(bug) + ":dense", *DENSE[1:], "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "REFUTED" and out["wrt"]["b"] == "REFUTED" and out["wrt"]["x"] == "PROVED"
    ce = out["counterexample"]
    assert set(ce) == {"sizes", "argument", "index", "expected", "got", "inputs_seed"} and ce["argument"] == "b"


SIN = """
import jax
import jax.numpy as jnp


@jax.custom_vjp
def wave(x):
    return jnp.sin(x)


wave.defvjp(lambda x: (wave(x), x), lambda x, dy: (dy * jnp.cos(x),))
"""
PLAIN = "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.tanh(x)\n"
NORULES = "import jax\nimport jax.numpy as jnp\n\nf = jax.custom_vjp(jnp.tanh)\n"


@pytest.mark.parametrize("source,args,message", [
    (None, ["missing.py:f", "--shape", "x=n"], "missing.py: no such file"),
    (PLAIN, ["{f}:g", "--shape", "x=n"], "has no module-level name 'g'"),
    (PLAIN, ["{f}:f", "--shape", "x=n"], "is not a jax.custom_vjp function"),
    (NORULES, ["{f}:f", "--shape", "x=n"], "without rules"),
    (SIN, ["{f}:wave", "--shape", "x=n"], r"unsupported primitive 'sin' at .*m\.py:\d+"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=k,m", "--shape", "b=m"], "tracing .* failed"),
    (None, DENSE[:5], "takes 3 positional arguments .*got 2 --shape"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "b=m", "--shape", "w=d,m"], "argument 2 of dense is 'w'"),
    (None, [DENSE[0], "--shape", "x", "--shape", "w=d,m", "--shape", "b=m"], "expected ARG=DIMS"),
    (None, [DENSE[0], "--shape", "x=n,d!", "--shape", "w=d,m", "--shape", "b=m"], "is not a dimension"),
    ("def broken(:\n", ["{f}:f", "--shape", "x=n"], r"m\.py:1: syntax error"),
])
def test_bad_input_is_one_line_with_exit_code_3(tmp_path, capsys, source, args, message):
    import re
    f = tmp_path / "m.py"
    if source is not None:
        f.write_text(source)
    args = [a.format(f=f) for a in args]
    assert main(["certify", *args]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("verigrad certify: error:")
    assert re.search(message, err), err


def test_bad_input_through_the_real_command_has_no_traceback(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SIN)
    r = cli(f"{f}:wave", "--shape", "x=n")
    assert r.returncode == 3 and "Traceback" not in r.stderr and r.stdout == ""
    assert "unsupported primitive 'sin'" in r.stderr


def test_nondiff_argnums_are_refused_on_the_command_line(tmp_path, capsys):
    f = tmp_path / "m.py"
    f.write_text(textwrap.dedent("""
        from functools import partial
        import jax

        @partial(jax.custom_vjp, nondiff_argnums=(1,))
        def scale(x, c):
            return c * x

        scale.defvjp(lambda x, c: (c * x, None), lambda c, r, dy: (c * dy,))
    """))
    assert main(["certify", f"{f}:scale", "--shape", "x=n", "--shape", "c="]) == 3
    assert "nondiff_argnums (c)" in capsys.readouterr().err
