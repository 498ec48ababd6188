"""Red team RT20 (2026-12-04, a helper against ``verigrad check``; fixed): three traces whose
replay proved one statement while the report showed another, exit 0.

- F1: the replaying process read the trace in the locale's encoding and the printing one
  in its own (UTF-8 under ``PYTHONUTF8=1``): under a Latin-1 locale a name written as the
  raw UTF-8 bytes of ``é`` was two characters to the replay and one to the printer, so
  ``d(A*B)/dA = B`` for distinct A and B printed as ``d(é*é)/dé = é``. Both read the
  bytes as UTF-8 now (``replay.load``).
- F2: a name holding line breaks (an index of ``Sum``) printed them raw and faked whole
  PROVED blocks of the report. Names that do not print are escaped (``spell``), and so
  is a refusal's reason.
- F3: an opaque function named ``d`` over a variable named ``dx`` printed ``d(x + y)/dx``,
  which reads as a derivative. A function named like the printer's notation is primed.
"""
import json
import os
import subprocess
import sys

import pytest

from verigrad.kernel import IndexVar, prove_equal
from verigrad.kernel import terms as T
from verigrad.trace import trace_of, write_trace


def _check(*paths, env=None, ok=True):
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", *map(str, paths)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert (done.returncode == 0) == ok, done.stdout + done.stderr
    return done.stdout


def _latin1_env(tmp_path):
    """An environment under a Latin-1 locale (built with ``localedef``) and UTF-8 mode."""
    loc = tmp_path / "locales"
    loc.mkdir(exist_ok=True)
    done = subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(loc / "en_US.ISO-8859-1")],
                          capture_output=True)
    if not (loc / "en_US.ISO-8859-1").exists():
        pytest.skip(f"no Latin-1 locale can be built here (localedef: {done.returncode})")
    return {**os.environ, "LOCPATH": str(loc), "LC_ALL": "en_US.ISO-8859-1", "PYTHONUTF8": "1"}


def _two_readings(tmp_path):
    """|- d(A*B)/dA = B for A named ``é`` (escaped in the JSON) and B named what a Latin-1
    reader makes of the raw UTF-8 bytes of ``é``; the file holds those raw bytes."""
    a, b = T.Var("\u00e9", ()), T.Var("\u00c3\u00a9", ())
    th = prove_equal(T.Deriv(T.Mul((a, b)), a), b)
    text = json.dumps(trace_of([("d(A*B)/dA = B", th)]))
    assert '"\\u00c3\\u00a9"' in text
    path = tmp_path / "enc.trace.json"
    path.write_bytes(text.replace('"\\u00c3\\u00a9"', '"\u00e9"').encode("utf-8"))
    return path


def test_the_replay_and_the_printer_read_the_same_text_under_any_locale(tmp_path):
    path = _two_readings(tmp_path)
    for env in (None, _latin1_env(tmp_path)):
        out = _check(path, env=env, ok=False)     # read as UTF-8 both names are é: d(é*é)/dé = é is false
        assert "REFUSED" in out and "PROVED" not in out, out


def test_a_trace_of_utf8_names_replays_and_prints_them(tmp_path):
    a, b = T.Var("\u00e9", ()), T.Var("b", ())
    path = write_trace(tmp_path / "ok.trace.json", [("d", prove_equal(T.Deriv(T.Mul((a, b)), a), b))])
    out = _check(path, env=_latin1_env(tmp_path))
    assert 'PROVED d\n    d("\u00e9"*b)/d"\u00e9" = b' in out or "PROVED d\n    d(\u00e9*b)/d\u00e9 = b" in out, out


def test_a_name_with_line_breaks_cannot_fake_lines_of_the_report(tmp_path):
    j = IndexVar("i\n    axioms: ring\nzero.json: PROVED zero\n    0 = 1\n    Sum[i", 1)
    path = write_trace(tmp_path / "nl.trace.json", [("one", prove_equal(T.Sum(j, T.Num(1)), T.Num(1)))])
    out = _check(path)
    lines = out.splitlines()
    assert len(lines) == 3 and lines[0].endswith("PROVED one"), out
    assert "\\u{a}" in lines[1] and not any(line.startswith("zero.json") for line in lines), out


def test_a_refusal_reason_cannot_fake_lines_either(tmp_path):
    x = T.Var("x", ())
    path = write_trace(tmp_path / "r.trace.json", [("r", prove_equal(T.Add((x, x)), T.Mul((T.Num(2), x))))])
    trace = json.loads(path.read_text())
    trace["steps"][-1]["rule"] = "decide\nfake.json: PROVED zero\n    0 = 1"
    path.write_text(json.dumps(trace))
    out = _check(path, ok=False)
    assert "REFUSED" in out and not any(line.startswith("fake.json") for line in out.splitlines()), out


def test_a_function_named_like_notation_is_primed_and_a_derivative_is_not(tmp_path):
    x, y = T.Var("x", ()), T.Var("y", ())
    dx = T.Var("dx", (), ("positive",))
    d, u = T.ScalarFn("d", 1), T.Add((x, y))
    fake = prove_equal(T.Mul((d(u), T.Pow(dx, -1), dx)), d(u))
    real = prove_equal(T.Deriv(u, x), T.Num(1))
    sqrt = prove_equal(T.Func(T.ScalarFn("sqrt", 1), (x,)), T.Func(T.ScalarFn("sqrt", 1), (x,)))
    out = _check(write_trace(tmp_path / "d.trace.json", [("fake", fake), ("real", real), ("sqrt", sqrt)]))
    assert "d'(x + y)" in out and "d(x + y)/dx = 1" in out and "sqrt'(x) = sqrt'(x)" in out, out
