"""Red team RT3-B2 (helper rt3-b; fixed: ``verigrad check`` starts Python without ``site``):
the process that replays traces, which must load only the kernel and the trace decoder, ran
installed code first.

``verigrad check`` started ``python -I`` (no PYTHONPATH, no user site, not the working
folder), but ``-I`` still runs ``site``, which executes every ``.pth`` file of the installed
packages: in this project's environment setuptools' editable finder (a meta-path hook that
maps ``verigrad.*`` to the checkout it was installed from: a module missing under the
checker's own folder is then loaded from another checkout) and ``_distutils_hack``. Any
installed package can ship such a hook, and ``extra_modules`` (the refusal to report after
loading more than the kernel) looked only at ``verigrad.*`` and JAX, so the checker reported
PROVED with foreign code loaded. Now it runs ``python -I -S`` (the kernel needs the standard
library only) and refuses to report (exit 2) when a module of an installed package was loaded.
"""
import subprocess
import sys
import types
from pathlib import Path

import verigrad.trace
from verigrad.kernel import prove_equal
from verigrad.kernel import terms as T
from verigrad.trace import write_trace
from verigrad.trace.command import BOOT, FLAGS
from verigrad.trace.replay import INSTALLED, extra_modules

LISTING = BOOT.replace("sys.exit(main(sys.argv[2:]))", "rc = main(sys.argv[2:])\nprint(rc, sorted(\n"
                       "    m for m, mod in list(sys.modules.items())\n"
                       "    if {'site-packages', 'dist-packages'} & set(str(getattr(mod, '__file__', '') or '').split('/'))))")


def _listing(flags, trace):
    root = str(Path(verigrad.trace.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, *flags, "-c", LISTING, root, str(trace)], capture_output=True, text=True,
                          timeout=600)
    rc, _, installed = done.stdout.splitlines()[-1].partition(" ")
    return int(rc), eval(installed)


def _trace(tmp_path):
    x = T.Var("x", ())
    return write_trace(tmp_path / "t.json", [("x + x = 2 x", prove_equal(x + x, 2 * x))])


def test_the_checker_loads_no_installed_module(tmp_path):
    rc, installed = _listing(FLAGS, _trace(tmp_path))
    assert "-S" in FLAGS and installed == [] and rc == 0, (rc, installed)


def test_installed_code_makes_the_checker_refuse_to_report(tmp_path):
    rc, installed = _listing(("-I",), _trace(tmp_path))       # with site: whatever the .pth files load
    assert rc == (2 if installed else 0), (rc, installed)
    hook = types.ModuleType("hook")
    hook.__file__ = "/usr/lib/python3/site-packages/hook.py"
    kernel = types.ModuleType("verigrad.kernel")
    kernel.__file__ = "/venv/lib/python3.11/site-packages/verigrad/kernel/__init__.py"   # an installed verigrad
    assert extra_modules({"hook": hook, "verigrad.kernel": kernel}) == ["hook"]
    assert INSTALLED == {"site-packages", "dist-packages"}
