"""Red team RT-14 (fixed: names that are not identifiers are quoted): ``verigrad check`` prints ``0 = 1`` (and ``0/0 = 1``) as PROVED, exit 0.

The statement ``check`` prints is the kernel's terms shown by the printer, and the printer
shows a defined constant (``Named``) and a variable (``Var``) by their bare names. The
kernel accepts any non-empty string as either name (``Named._canon`` and ``check_name``
ask only for that), so a name can be a numeral, and the printed statement then reads as
a different, false, one. The replay itself is right (each theorem is true); what the
user is shown as checked is not what the kernel proved.

Reproduction (a hand-written trace, no proof search involved)::

    $ cat zero_is_one.json
    {"format": "verigrad-proof-trace", "version": 1,
     "objects": [["Num", ["q", 1, 1]], ["Named", "0", 0]],
     "steps": [{"rule": "definition", "parents": [], "args": ["0", 0], "lhs": 1, "rhs": 0}],
     "claims": [{"name": "arith.zero_is_one", "step": 0}]}
    $ verigrad check zero_is_one.json          # exit 0
    zero_is_one.json: PROVED arith.zero_is_one
        0 = 1
        axioms: definition

The kernel's theorem is ``|- c = 1`` for the constant ``c`` named "0" and defined as 1
(``theorem.define``). The same root with a variable: ``Var("0", (), ("positive",))``,
``prove_equal(v / v, 1)``, written with ``write_trace``, is printed ``0/0 = 1`` (axioms
pow_add_pos, pow_mul, ring; the variable's fact is not shown either). Any trace can so
hide its meaning behind names: a constant named like a term (``"x[i] + 1"``), a
variable named like another's expression.

Root: ``verigrad/kernel/terms.py`` (``Named._canon``; ``Var._canon`` via
``sizes.check_name``) accept any string as a name, and ``verigrad/report/printing.py``
(``_text``: ``T.Named`` and ``T.Var`` shown as ``t.name``) prints it verbatim; the
statement ``verigrad/trace/command.py`` (``statement``) prints for a claim is that text.

Fix direction: the printer shows a name that is not an identifier quoted (the kernel's
``spell`` already does so for keys; importers legitimately make names such as
``x@net.0``), and ``check`` shows a defined constant with its definition, so the printed
statement is one a reader cannot mistake for another. Related, not asserted here:
``check`` prints no domains (a variable's facts, a size's lower bound), so ``0/0 = 1``
above would read ``v/v = 1`` without "v positive", and ``Sum[j<n-2](1) = n - 2`` looks the
same for ``n >= 2`` (true) as for ``n >= 1`` (false, issue 10's K1).
"""
import json
import subprocess
import sys

import pytest

FALSE = {"0 = 1", "0/0 = 1"}

TRACES = {
    # |- c = 1, c the constant named "0" defined as 1 (theorem.define)
    "zero_is_one.json": {
        "format": "verigrad-proof-trace", "version": 1,
        "objects": [["Num", ["q", 1, 1]], ["Named", "0", 0]],
        "steps": [{"rule": "definition", "parents": [], "args": ["0", 0], "lhs": 1, "rhs": 0}],
        "claims": [{"name": "arith.zero_is_one", "step": 0}]},
    # |- v/v = 1, v the positive scalar variable named "0" (as write_trace writes it)
    "zero_over_zero.json": {
        "format": "verigrad-proof-trace", "version": 1,
        "objects": [["Var", "0", ["t"], ["t", "nonneg", "nonzero", "positive"]], ["Pow", 0, ["q", -1, 1]],
                    ["Mul", ["t", 0, 1]], ["Num", ["q", 1, 1]]],
        "steps": [{"rule": "decide", "parents": [], "args": [2, 3], "lhs": 2, "rhs": 3, "choices": []}],
        "claims": [{"name": "arith.zero_over_zero", "step": 0}]},
}


def _check_json(path):
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", "--json", str(path)],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_rt14_check_never_prints_a_false_statement_as_proved(tmp_path):
    for name, trace in TRACES.items():
        path = tmp_path / name
        path.write_text(json.dumps(trace))
        _, verdicts = _check_json(path)
        shown = [v.get("statement") for v in verdicts if v["status"] == "PROVED"]
        assert not FALSE & set(shown), f"{name}: PROVED {shown}"


def test_rt14_the_names_are_quoted_and_the_statement_is_the_kernels(tmp_path):
    path = tmp_path / "zero_is_one.json"
    path.write_text(json.dumps(TRACES["zero_is_one.json"]))
    _, verdicts = _check_json(path)
    (v,) = verdicts
    assert v["status"] == "PROVED" and v["statement"] == '"0" = 1' and v["trace"] == str(path)


def test_rt14_a_claim_name_cannot_fake_report_lines(tmp_path):
    trace = json.loads(json.dumps(TRACES["zero_is_one.json"]))
    trace["claims"][0]["name"] = "fine\nother.json: PROVED x = x"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", str(path)], capture_output=True, text=True,
                          timeout=600)
    assert not any(line.startswith("other.json") for line in done.stdout.splitlines()), done.stdout
