"""Red team RT-40 (helper-6, fixed): two statements ``verigrad check`` printed so that they read
false.

- A power of a derivative was printed ``d(x^2)/dx^2 = 4*x^2`` (read: the second derivative
  of x^2 is 4x^2, false at x = 1), and ``6*x/d(x^2)/dx = 3``: the printer gave
  ``d(u)/dv`` the precedence of an atom. It is a quotient now: ``(d(x^2)/dx)^2``.
- A condition on the partial derivative ``f'`` of an opaque ``f`` was reified (the kernel's
  ``reify``) as a function named ``f_d0``, which is the very symbol a user's function
  ``f_d0`` is (function symbols are interned by name), so ``check`` printed
  ``d(f(x))/dx/d(f(x))/dx + 0*f_d0(x) = 1 under f_d0(x) != 0``, false as read for an
  independent f_d0 (f = 0, f_d0 = exp). The partial is now the symbol ``f'0``, a name no
  user's function (an identifier) can have; the trace decoder rebuilds it from f.
"""
import json
import subprocess
import sys

from verigrad.kernel import prove_equal
from verigrad.kernel import terms as T
from verigrad.trace import write_trace


def _check(trace):
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", "--json", str(trace)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_a_power_of_a_derivative_is_bracketed(tmp_path):
    x = T.Var("x", ())
    d = T.Deriv(T.Pow(x, 2), x)
    sq = prove_equal(T.Pow(d, 2), T.Mul((T.Num(4), T.Pow(x, 2))))
    inv = prove_equal(T.Mul((T.Num(6), T.Pow(d, -1), x)), T.Num(3))
    shown = [v["statement"] for v in _check(write_trace(tmp_path / "d.trace.json", [("sq", sq), ("inv", inv)]))]
    assert shown == ["(d(x^2)/dx)^2 = 4*x^2", "6*x/(d(x^2)/dx) = 3"], shown


def test_a_partial_is_not_a_users_function(tmp_path):
    x = T.Var("x", ())
    f, g = T.ScalarFn("f", 1), T.ScalarFn("f_d0", 1)
    d = T.Deriv(f(x), x)
    th = prove_equal(T.Add((T.Mul((d, T.Pow(d, -1))), T.Mul((T.Num(0), g(x))))), T.Num(1))
    (c,) = th.conds
    assert g not in c.term.atoms and c.term.atoms, c      # the partial is a symbol of its own
    (v,) = _check(write_trace(tmp_path / "p.trace.json", [("p", th)]))
    assert v["status"] == "PROVED" and v["conditions"] == ["f'0(x) != 0"], v


def test_a_forged_partial_name_is_refused_by_the_decoder(tmp_path):
    """A trace may not name a function ``g'5`` of a ``g`` with one argument."""
    x = T.Var("x", ())
    f = T.ScalarFn("f", 1)
    th = prove_equal(T.Mul((T.Deriv(f(x), x), T.Pow(T.Deriv(f(x), x), -1))), T.Num(1))
    path = write_trace(tmp_path / "q.trace.json", [("q", th)])
    text = path.read_text().replace("f'0", "f'5")
    path.write_text(text)
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", str(path)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode != 0 and "PROVED" not in done.stdout, done.stdout
