"""Red team RT9-A2 (helper rt9, open: a known limit, xfail strict): a theorem file's code runs in the reporting
process after all, through a module that process imports only after the workers ran.

The reporting process of ``verify`` never imports a theorem file (RT8-C1), but it imports
modules lazily *after* a worker has run one: ``rich.table``, ``rich.box``,
``rich.padding``, ``rich._ratio``, ``rich._emoji_codes`` (``console._table``, for the
summary) and ``unicodedata`` (a probe with ``os.register_at_fork`` lists what is new in
``sys.modules`` after the first fork). A worker runs with the user's rights, so the file
writes a byte-code file ``rich/__pycache__/table.cpython-3XY.pyc`` stamped with the
source's mtime and size (the source itself untouched, so nothing looks changed): rich's
own code plus a payload. When the parent imports ``rich.table`` to print the table, the
payload runs there, turns the record of the file (goal ``x + 1 = x + 2``, false at
x = 0) to "proved" and the row to ``evil  proved``, and ``verigrad verify evil.py`` exits 0
with ``1 proved, 0 unproved, 0 failed``. The same holds for any module the parent loads
late, verigrad's own included, and for the next run of verify (the .pyc stays). The
test works on a copy of rich first on PYTHONPATH (the file acts only where
``RT9_SITE`` points), never on the installed one.

(Same class, not demonstrated: the workers run as the parent's user, with no Yama
ptrace restriction here, so a worker may also write the parent's memory through
``/proc/PPID/mem`` or ptrace it.)

Command: ``RT9_SITE=$PWD/site RT9_MARK=$PWD/mark PYTHONPATH=$PWD/site:REPO python -m
verigrad verify evil.py --no-cache`` with ``site/rich`` a copy of rich (exit 0).
"""
import os
import shutil
from pathlib import Path

import pytest

import rich

from _verify_files import ROOT, run_cli

EVIL = r'''
import os as _os
import pathlib as _pl
import importlib.util as _u
import importlib._bootstrap_external as _be
import rich as _rich

PAYLOAD = r"""

def _rt9_payload():
    import gc, multiprocessing, os, pathlib, sys
    if multiprocessing.parent_process() is not None:
        return
    pathlib.Path(os.environ["RT9_MARK"]).write_text("ran in the reporting process")
    from verigrad.proof.library import TheoremRecord
    for o in gc.get_objects():
        if isinstance(o, TheoremRecord) and o.name == "evil":
            o.status, o.reason, o.statement = "proved", "", "|- x + 1 = x + 2"
            o.__dict__.pop("false", None)
    f = sys._getframe()
    while f is not None:
        if f.f_code.co_name == "show_table":
            for row in f.f_locals["cells"]:
                if row[0].text == "evil":
                    import dataclasses
                    row[1] = dataclasses.replace(row[1], text="proved", style="green")
                    row[-1] = dataclasses.replace(row[-1], text="")
        if f.f_code.co_name == "_summary":
            f.f_locals["notes"].clear()
        f = f.f_back


_rt9_payload()
"""

_site = _os.environ.get("RT9_SITE")
if _site and _rich.__file__.startswith(_site):          # (only ever a throwaway copy of rich)
    _src = _pl.Path(_rich.__file__).parent / "table.py"
    _st = _src.stat()
    _code = compile(_src.read_text() + PAYLOAD, str(_src), "exec")
    _pyc = _pl.Path(_u.cache_from_source(str(_src)))
    _pyc.parent.mkdir(exist_ok=True)
    _tmp = _pyc.with_suffix(".tmp")
    _tmp.write_bytes(_be._code_to_timestamp_pyc(_code, int(_st.st_mtime), _st.st_size))
    _tmp.replace(_pyc)

from verigrad.proof import *


@apply
def apply(x):
    return Equality(x + 1, x + 2)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
    Eq << Eq[0].this.lhs.simplify()
'''


@pytest.mark.xfail(strict=True, reason="RT9-A2: verify is not a sandbox; a theorem file runs with "
                   "the user's rights and can change files the reporting process loads later (README, "
                   "docs/architecture.md)")
def test_rt9_a2_a_worker_cannot_plant_code_the_reporting_process_imports(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(Path(rich.__file__).parent, site / "rich", ignore=shutil.ignore_patterns("__pycache__"))
    f = tmp_path / "evil.py"
    f.write_text(EVIL)
    mark = tmp_path / "mark"
    done = run_cli(["verify", str(f), "--no-cache"], tmp_path, pythonpath=f"{site}{os.pathsep}{ROOT}",
                   RT9_SITE=str(site), RT9_MARK=str(mark), COLUMNS="200")
    assert not mark.exists(), "the theorem file's code ran in the process that reports the verdict"
    assert done.returncode == 1, done.stdout
