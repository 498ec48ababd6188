"""The red team's theorem files: one statement about one symbol, written out and run
through ``verify`` as ``verigrad verify`` runs a file (each run from scratch: the
script's state and the files' modules of an earlier run forgotten)."""
import os
import subprocess
import sys
from pathlib import Path

from verigrad.proof import library, script

ROOT = Path(__file__).resolve().parents[2]

BODY = '''
from verigrad.proof import *


@apply
def apply({var}):
    return Equality({lhs}, {rhs})


@prove
def prove(Eq):
    {var} = Symbol.{var}({kind}=True)
    Eq << apply({var})
{steps}'''


def statement(lhs, rhs, kind, var="x", steps=()):
    """The text of a theorem file stating ``lhs = rhs`` for a symbol ``var`` of ``kind``
    (``real``, ``positive``, ``complex``), proved by the steps ``Eq << step`` after its
    ``apply``."""
    return BODY.format(lhs=lhs, rhs=rhs, kind=kind, var=var, steps="".join(f"    Eq << {s}\n" for s in steps))


def own_cache(tmp_path, monkeypatch):
    """Point the proof cache at a folder of this test's own."""
    monkeypatch.setenv("VERIGRAD_CACHE", str(tmp_path / "cache"))


def verify(path, use_cache=False):
    """The record ``verify`` gives the theorem file ``path``."""
    script.forget()
    for m in [m for m in sys.modules if m.startswith("_verigrad_file_")]:
        del sys.modules[m]
    (rec,) = library.verify_library(infos=[library.file_info(path)], jobs=1, use_cache=use_cache)
    return rec


def verify_statement(path, lhs, rhs, kind, var="x"):
    """Write the statement ``lhs = rhs`` (``statement``) to ``path`` and verify it without the cache."""
    path.write_text(statement(lhs, rhs, kind, var))
    return verify(path)


def cache_entries(cache):
    """The record files of a ``VERIGRAD_CACHE`` folder (not their traces)."""
    return [p for p in (Path(cache) / "verify").glob("*.json") if not p.name.endswith(".trace.json")]


def run_cli(args, cwd, pythonpath=None, **env):
    """``python -m verigrad ARGS`` as a fresh process, in ``cwd``, with a cache of its own
    there and the witness check off (what is tested is the reporting process's verdict);
    ``pythonpath`` instead of this checkout, ``env`` added to the environment."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath or ROOT), VERIGRAD_CACHE=str(Path(cwd) / "cache"),
               VERIGRAD_WITNESS="0", **env)
    return subprocess.run([sys.executable, "-m", "verigrad", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)
