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


FLIP_CUMSUM = """
import jax
import jax.numpy as jnp


@jax.custom_vjp
def cumsum(x):
    return jnp.cumsum(x)


cumsum.defvjp(lambda x: (cumsum(x), None), lambda _, dy: (jnp.flip(jnp.cumsum(jnp.flip(dy))),))
"""


def test_unknown_is_exit_code_2_with_json_fields(tmp_path, capsys):
    f = tmp_path / "cumsum.py"
    f.write_text(FLIP_CUMSUM)
    assert main(["certify", f"{f}:cumsum", "--shape", "x=n", "--json"]) == 2
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
    assert {"sizes", "argument", "index", "expected", "got", "inputs_seed", "inputs", "cotangents", "outputs"} <= set(ce)
    assert ce["argument"] == "b" and set(ce["inputs"]) == {"x", "w", "b"} and set(ce["cotangents"]) == {"dy"}


ATAN = """
import jax
import jax.numpy as jnp


@jax.custom_vjp
def angle(x):
    return jnp.arctan2(x, 1.0 + x * x)


angle.defvjp(lambda x: (angle(x), x), lambda x, dy: (dy * (1 - x * x) / (x * x + (1 + x * x) ** 2),))
"""
PLAIN = "import jax.numpy as jnp\n\ndef f(x):\n    return jnp.tanh(x)\n"
NORULES = "import jax\nimport jax.numpy as jnp\n\nf = jax.custom_vjp(jnp.tanh)\n"


@pytest.mark.parametrize("source,args,message", [
    (None, ["missing.py:f", "--shape", "x=n"], "missing.py: no such file"),
    (PLAIN, ["{f}:g", "--shape", "x=n"], "has no module-level name 'g'"),
    (PLAIN, ["{f}:f", "--shape", "x=n"], "is not a jax.custom_vjp function"),
    (NORULES, ["{f}:f", "--shape", "x=n"], "without rules"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=k,m", "--shape", "b=m"], "tracing .* failed"),
    (None, DENSE[:5], "takes 3 positional arguments .*no --shape .*for b"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "z=m", "--shape", "w=d,m"], "no positional argument 'z'"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "x=m", "--shape", "w=d,m"], "given two shapes"),
    (None, [DENSE[0], "--shape", "x=n,d", "--static", "b=(", "--shape", "w=d,m"], "not a valid value"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m", "--min", "z=2"], "not a size"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m", "--output", "3"], "--output 3"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m", "--wrt", "q"], "--wrt q"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m", "--assume", "sum(z) == 1"],
     "z is not an argument"),
    (None, [DENSE[0], "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m", "--assume", "x +"], "not an expression"),
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


@pytest.mark.parametrize("args,message", [
    ([DENSE[0], "--shape", "x=n,d", "--shape", "w=d,m", "--shape", "b=m", "--timeout", "-1"], "positive"),
    ([DENSE[0], "--bogus"], "unrecognized arguments"),
    ([DENSE[0], "--shape", "x", "--shape", "w=d,m", "--shape", "b=m"], "expected ARG=DIMS"),
    ([DENSE[0], "--shape", "x=n,d!", "--shape", "w=d,m", "--shape", "b=m"], "is not a dimension"),
])
def test_argument_errors_are_one_line_with_exit_code_2(capsys, args, message):
    import re
    assert main(["certify", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("verigrad certify: error:")
    assert re.search(message, err), err


def test_bad_input_through_the_real_command_has_no_traceback(tmp_path):
    r = cli(DENSE[0], "--shape", "x=n,d", "--shape", "w=k,m", "--shape", "b=m")
    assert r.returncode == 3 and "Traceback" not in r.stderr and r.stdout == ""
    assert "tracing dense" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_refused_primitive_is_unknown_with_its_reason(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(ATAN)
    r = cli(f"{f}:angle", "--shape", "x=n")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stdout.strip().splitlines()[-1] == "UNKNOWN" and "unsupported primitive 'atan2'" in r.stdout
    f.write_text(ATAN.replace("(1 - x * x)", "(1 + x * x)"))      # wrong: refuted by running JAX alone
    r = cli(f"{f}:angle", "--shape", "x=n")
    assert r.returncode == 1 and r.stdout.strip().splitlines()[-1] == "REFUTED"


def test_shapes_are_matched_by_name_not_order():
    assert main(["certify", DENSE[0], "--shape", "b=m", "--shape", "w=d,m", "--shape", "x=n,d"]) == 0


def test_nondiff_argnums_take_static_values_on_the_command_line(tmp_path, capsys):
    f = tmp_path / "m.py"
    f.write_text(textwrap.dedent("""
        from functools import partial
        import jax

        @partial(jax.custom_vjp, nondiff_argnums=(1,))
        def scale(x, c):
            return c * x

        scale.defvjp(lambda x, c: (c * x, None), lambda c, r, dy: (c * dy,))
    """))
    assert main(["certify", f"{f}:scale", "--shape", "x=n"]) == 3
    assert "nondiff_argnums (c)" in capsys.readouterr().err and True
    assert main(["certify", f"{f}:scale", "--shape", "x=n", "--static", "c=2.5"]) == 0
    assert "PROVED" in capsys.readouterr().out
