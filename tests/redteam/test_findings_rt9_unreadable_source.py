"""Red team RT9-B1 (helper rt9, open, minor: a traceback, not a verdict): the reporting
process of ``verify`` reads theorem files and their helpers' sources (to find citations,
the docstring and the cache key) with ``Path.read_text()`` + ``ast.parse``, catching only
``OSError`` and ``SyntaxError``. Valid Python that is not UTF-8 (a ``# -*- coding:
latin-1 -*-`` cookie, which Python honours) raises ``UnicodeDecodeError``, and a long
expression (``1 + 1 + ... + 1``, 20000 terms) raises ``RecursionError: maximum recursion
depth exceeded during ast construction``; either reaches the user as a Python traceback
(``library.file_info``, ``library._outside_imports``; ``TheoremInfo.doc`` and
``cites_of`` read the same way). Expected: a one-line error, or the file checked (its
worker would run it), never a traceback.

Commands (in a folder with the files below):
``verigrad verify latin1.py``, ``verigrad verify uses_helper.py``, ``verigrad verify deep.py``.
"""

import pytest

from _verify_files import run_cli

HONEST = b'''
from verigrad.proof import *


@apply
def apply(x):
    return Equality(x + x, 2 * x)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.simplify()
'''

CASES = {
    "latin1": {"latin1.py": b'# -*- coding: latin-1 -*-\n"""Caf\xe9: x + x = 2 x."""\n' + HONEST},
    "uses_helper": {"helper_l1.py": b'# -*- coding: latin-1 -*-\nX = "caf\xe9"\n',
                    "uses_helper.py": b"from helper_l1 import X\n" + HONEST},
    "deep": {"deep.py": HONEST + b"\n_Y = " + b"+".join([b"1"] * 20000) + b"\n"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rt9_b1_verify_prints_no_traceback_for_a_source_it_cannot_parse(tmp_path, case):
    for name, data in CASES[case].items():
        (tmp_path / name).write_bytes(data)
    done = run_cli(["verify", f"{case}.py", "--no-cache"], tmp_path)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-2000:]
