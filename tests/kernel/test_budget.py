"""The kernel's size. Its budget is 3,500 lines of code, so that one person can read the
kernel in a sitting; lines of code as cloc counts them (a line with a token other than a
comment or a docstring). The budget is not a golf target: comments and docstrings that
say why a rule is sound, and blank lines, are not counted, so writing them costs nothing.
On 2026-12-01: 3,140 lines of code in 4,557 physical lines, after the permutation and
piecewise rules of issue 12, the red team's fixes and issue 10's cheaper replay
(decision plans, conversion, substitutions up to renaming); what needs no
trust lives outside the kernel (the trace decoder is ``verigrad/trace/replay.py``; the
kernel keeps ``replay_step``, the replay's trusted part).

    .venv/bin/python tests/kernel/test_budget.py      # prints both counts per file
"""
from __future__ import annotations

import io
import sys
import tokenize
from pathlib import Path

BUDGET = 3_500
KERNEL = Path(__file__).resolve().parents[2] / "verigrad" / "kernel"
_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER, tokenize.ENCODING}


def code_lines(source: str) -> int:
    """The number of lines of ``source`` that hold code (not a comment, a docstring or
    blank). A docstring is a statement that is only a string."""
    lines, statement = set(), []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if any(t.type != tokenize.STRING for t in statement):
                for t in statement:
                    lines.update(range(t.start[0], t.end[0] + 1))
            statement = []
        elif tok.type not in _SKIPPED:
            statement.append(tok)
    return len(lines)


def kernel_lines() -> dict[str, int]:
    return {p.name: code_lines(p.read_text(encoding="utf-8")) for p in sorted(KERNEL.glob("*.py"))}


def test_the_kernel_keeps_its_budget():
    counts = kernel_lines()
    assert sum(counts.values()) <= BUDGET, counts


def test_the_count_skips_comments_docstrings_and_blank_lines_only():
    source = 'def f(x):\n    """Doc\n    string."""\n    # a comment\n\n    y = ("a"\n         "b")\n    return x + 1  # trailing\n'
    assert code_lines(source) == 4          # def, the two lines of y, return
    assert code_lines('"""module doc"""\nx = 1\n') == 1
    assert code_lines("s = '''not\na docstring'''\n") == 2
    assert code_lines('", ".join(x)\n') == 1      # a string that starts a statement is code


if __name__ == "__main__":
    counts = kernel_lines()
    physical = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(KERNEL.glob("*.py"))}
    for name, n in counts.items():
        print(f"{n:6d} code {physical[name]:6d} lines  verigrad/kernel/{name}")
    print(f"{sum(counts.values()):6d} code {sum(physical.values()):6d} lines  in all (budget {BUDGET:,} lines of code)")
    sys.exit(0)
