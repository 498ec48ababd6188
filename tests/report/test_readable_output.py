"""Output for people and for logs: statements keep every index and read unambiguously,
nothing from the kernel is eaten as markup, tables fit 80 columns or become lists,
progress is a line per item off a terminal, counterexamples show their difference,
large side conditions name their shared subterms once."""
import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

import verigrad  # noqa: F401  (attaches the printers)
from verigrad.certify.certificate import difference, shown_apart
from verigrad.console import Progress, cell, say, show_table
from verigrad.kernel import SizeSym, Var
from verigrad.frontends import ops
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly
from verigrad.kernel.theorem import Condition
from verigrad.report.printing import conditions, latex, text

ROOT = Path(__file__).resolve().parents[2]
n, m = SizeSym("n"), SizeSym("m")
x = Var("x", (n, 2 * m))


def _console(width=80):
    return Console(file=io.StringIO(), width=width, highlight=False)


# -- index names --------------------------------------------------------------------------------

def test_two_indices_with_one_name_print_apart():
    i_n, i_m = IndexVar("i", n), IndexVar("i", m)
    t = T.Lamda([i_n, i_m], x[Poly.sym(i_n), 2 * Poly.sym(i_m)])
    assert text(t) == "Lamda[i<n, i'<m](x[i, 2*i'])"
    assert "i'" in latex(t) and r"\mathrm" not in latex(t)


def test_a_renamed_index_avoids_names_in_use():
    i_n, i_m, i_p = IndexVar("i", n), IndexVar("i", m), IndexVar("i'", n)
    body = x[Poly.sym(i_n), Poly.sym(i_m)] * x[Poly.sym(i_p), 0]
    t = T.Lamda([i_n, i_m, i_p], body)
    assert text(t) == "Lamda[i<n, i''<m, i'<n](x[i, i'']*x[i', 0])"


def test_an_internal_binder_name_becomes_a_letter():
    u = IndexVar("_1_0", n)
    assert text(T.Sum(u, x[Poly.sym(u), 0])) == "Sum[i<n](x[i, 0])"


def test_one_index_keeps_its_name():
    i = IndexVar("i", n)
    assert text(T.Lamda([i], x[Poly.sym(i), 0] - x[Poly.sym(i), 1])) == "Lamda[i<n](x[i, 0] - x[i, 1])"


# -- markup ---------------------------------------------------------------------------------------

def test_say_and_tables_keep_brackets():
    out = _console()
    say(out, "[under -x[i, 2*j + 1] + x[i, 2*j] != 0]; [j - b >= 0]")
    show_table(out, ["claim", "note"], [["Lamda[i<n](x[i])", cell("[bold]x[i, 0] != 0", "red")]])
    shown = out.file.getvalue()
    assert "[under -x[i, 2*j + 1] + x[i, 2*j] != 0]; [j - b >= 0]" in shown
    assert "Lamda[i<n](x[i])" in shown and "[bold]x[i, 0] != 0" in shown


def test_certify_report_keeps_the_indices_of_a_side_condition(tmp_path):
    f = tmp_path / "relu_diff.py"
    f.write_text(
        "import jax, jax.numpy as jnp\n\n"
        "@jax.custom_vjp\n"
        "def f(x):\n    return jnp.maximum(x[:, 0] - x[:, 1], 0.0)\n\n"
        "def bwd(x, dy):\n    g = jnp.where(x[:, 0] - x[:, 1] > 0, dy, 0.0)\n    return (jnp.stack([g, -g], axis=1),)\n\n"
        "f.defvjp(lambda x: (f(x), x), bwd)\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu", VERIGRAD_WITNESS="0", COLUMNS="80",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "verigrad.cli", "certify", f"{f}:f", "--shape", "x=n,2"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.stdout.strip().endswith("PROVED"), r.stdout + r.stderr
    assert "x[i, 0] - x[i, 1] != 0" in r.stdout, r.stdout


# -- tables ---------------------------------------------------------------------------------------

def test_a_table_that_fits_is_a_table_and_one_that_does_not_is_a_list():
    out = _console()
    dropped = show_table(out, ["name", "status", "s"], [["dense", "PROVED", "0.40"]], right=("s",))
    assert dropped == () and "name" in out.file.getvalue() and "dense" in out.file.getvalue()
    out = _console()
    long = "a0 a1 b0 b1 c0 c1 " * 6
    dropped = show_table(out, ["name", "status", "sizes"], [["chain", "PROVED", long]])
    shown = out.file.getvalue()
    assert dropped is None and shown.startswith("chain\n  status: PROVED\n    sizes: a0 a1")
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
    assert "..." not in shown and "…" not in shown


def test_an_optional_column_goes_before_the_table_does():
    out = _console()
    dropped = show_table(out, ["name", "status", "note"], [["chain", "PROVED", "x" * 100]], optional=("note",))
    assert dropped == ("note",) and "chain" in out.file.getvalue() and "x" * 20 not in out.file.getvalue()


# -- progress ----------------------------------------------------------------------------------------

def test_progress_off_a_terminal_is_a_line_per_item(capsys):
    err = Console(file=io.StringIO())                # not a terminal
    with Progress("certify", 3, err=err) as p:
        p.start("layer dense")
        p.start("layer relu")
        p.done("rule chain", "PROVED")
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["certify 1/3: layer dense", "certify 2/3: layer relu", "certify 3/3: rule chain  PROVED"]


def test_quiet_progress_prints_nothing(capsys):
    with Progress("certify", 1, quiet=True, err=Console(file=io.StringIO())) as p:
        p.start("layer dense")
    assert capsys.readouterr().err == ""


# -- counterexamples -----------------------------------------------------------------------------------

def test_values_are_shown_with_the_digits_that_tell_them_apart():
    assert shown_apart(0.04968977, 0.04970012) == ("0.0496898", "0.0497001")
    assert shown_apart(1.0000001, 1.0000002) == ("1.0000001", "1.0000002")
    assert shown_apart(0.5, 0.25) == ("0.5", "0.25")
    a, b = shown_apart(1 / 3, 1 / 3 + 1e-15)
    assert a != b


def test_a_rounding_of_zero_reads_zero():
    assert shown_apart(-4.6e-15, 0.0) == ("0 (rounding: -4.6e-15)", "0")
    assert shown_apart(0.0, 0.731) == ("0", "0.731")


def test_the_difference_is_stated():
    assert difference(0.731511, 0.731548) == " (differs by 3.7e-05, relatively 5.1e-05)"
    assert difference(1.0, 1.0) == ""


# -- shared subterms of side conditions ---------------------------------------------------------------

def _big(depth=12):
    y = Var("y", (n,))
    j = IndexVar("j", n)
    t = T.Sum(j, y[Poly.sym(j)])
    for _ in range(depth):                           # a closed term, shared, with a large tree
        t = ops.tanh(t) * t + t
    return t


def test_side_conditions_name_their_shared_subterms_once():
    big, x8 = _big(), Var("x8", (n, 8))
    conds = []
    for k in range(6):
        i = IndexVar("i", n)
        conds.append(Condition("offkink", big * x8[Poly.sym(i), k] - x8[Poly.sym(i), k + 1]))
    lines, where = conditions(conds + conds[:2])                 # repeats count once
    assert len(lines) == 6 and where
    one_by_one = sum(len(str(c)) for c in conds)
    assert sum(map(len, lines)) + sum(map(len, where)) < one_by_one / 3
    assert all("#" in line for line in lines) and all(w.startswith("#") for w in where)
    assert conditions(conds) == conditions(list(reversed(conds)))    # the same text in any order


def test_small_side_conditions_are_written_out():
    i = IndexVar("i", n)
    lines, where = conditions([Condition("offkink", x[Poly.sym(i), 0] - x[Poly.sym(i), 1])])
    assert lines == ["x[i, 0] - x[i, 1] != 0 (off the kink) for every i<n"] and where == []   # RT3-B3
