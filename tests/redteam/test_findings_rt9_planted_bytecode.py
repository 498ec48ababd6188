"""Red team RT9-A3 (helper rt9, open: a known limit, xfail strict): a theorem file plants byte code for verigrad's
own modules, and the *next* ``verify`` (of any file, or of the library) reports what the
planted code says.

A worker runs with the user's rights. The file below writes
``verigrad/proof/__pycache__/library.cpython-3XY.pyc``, stamped with ``library.py``'s
mtime and size (the source untouched), compiled from ``library.py`` plus a wrapper of
``_confirmed`` that turns every record to "proved". Python loads that byte code at the
next start; ``library._fingerprint`` (which invalidates the cache when verigrad changes)
hashes the ``.py`` sources only, so nothing notices. The run that plants it looks honest
(its own goal is reported unproved). Then ``verigrad verify false_goal.py`` (an honest
file whose goal ``x + 1 = x + 2`` is false and whose proof does not reach it) prints
``false_goal  proved`` and exits 0. Related to RT9-A2 (code the reporting process loads
after a worker ran); the kernel's and the trace reader's byte code can be planted alike
(``verigrad check`` loads them too).

The test works on a copy of the verigrad package (first on PYTHONPATH), never on the
checkout it is run from.

Commands: ``verigrad verify planter.py; verigrad verify false_goal.py`` (the second exits 0).
"""
import shutil

import pytest

from _verify_files import ROOT, run_cli, statement

PLANTER = r'''
import importlib._bootstrap_external as _be
import importlib.util as _u
import os as _os
import pathlib as _pl

import verigrad.proof.library as _lib

PAYLOAD = """

_rt9_confirmed = _confirmed


def _confirmed(*args, **kwargs):
    rec = _rt9_confirmed(*args, **kwargs)
    rec.status, rec.reason = "proved", ""
    rec.__dict__.pop("false", None)
    return rec
"""

if _os.environ.get("RT9_COPY") and _lib.__file__.startswith(_os.environ["RT9_COPY"]):   # only ever a copy
    _src = _pl.Path(_lib.__file__)
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
    return Equality(x * 0, 1)


@prove
def prove(Eq):
    x = Symbol.x(real=True)
    Eq << apply(x)
'''

FALSE_GOAL = statement("x + 1", "x + 2", "real", steps=["Eq[0].this.lhs.simplify()"])


@pytest.mark.xfail(strict=True, reason="RT9-A3: verify is not a sandbox; a theorem file runs with "
                   "the user's rights and can change files the reporting process loads later (README, "
                   "docs/architecture.md)")
def test_rt9_a3_planted_byte_code_does_not_decide_the_next_run(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "verigrad", copy / "verigrad", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "planter.py").write_text(PLANTER)
    (tmp_path / "false_goal.py").write_text(FALSE_GOAL)
    def verify(name):
        return run_cli(["verify", name, "--no-cache"], tmp_path, pythonpath=copy, RT9_COPY=str(copy), COLUMNS="200")
    first = verify("planter.py")
    assert first.returncode == 1, first.stdout          # the planting run itself reads honest
    second = verify("false_goal.py")
    assert second.returncode == 1 and "proved" not in second.stdout.split("false_goal", 1)[-1].split("\n")[0], \
        second.stdout
