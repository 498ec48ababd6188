import json
import os

import pytest

# Keep JAX on the CPU in tests.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# The witness check (issue 10, item 4): every theorem the kernel makes while the tests
# run is also checked numerically (verigrad.certify.witness); a false one fails the test
# that made it. VERIGRAD_WITNESS=0 switches it off.
from verigrad.certify import witness as _witness  # noqa: E402

WITNESS = _witness.install() if _witness.enabled_by_env(default=True) else None


def _raise_new_failures(start: int):
    """A mismatch raises inside the kernel rule that made the theorem; this catches one
    that the code under test swallowed (an ``except Exception`` around a tactic)."""
    if WITNESS is not None and len(WITNESS.failures) > start:
        raise _witness.WitnessError(WITNESS.failures[start])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    start = len(WITNESS.failures) if WITNESS is not None else 0
    result = yield
    _raise_new_failures(start)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    start = len(WITNESS.failures) if WITNESS is not None else 0
    result = yield
    _raise_new_failures(start)
    return result


# -- the summary line: each xdist worker sends its counts to the controller ----------------

_totals: dict = {}


def _add(stats: dict):
    for k, v in stats.items():
        _totals[k] = _totals.get(k, 0) + v


def pytest_sessionfinish(session):
    if WITNESS is None:
        return
    stats = {**WITNESS.stats, "seconds": WITNESS.seconds}
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["verigrad_witness"] = json.dumps(stats)
    else:
        _add(stats)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    out = getattr(node, "workeroutput", {}).get("verigrad_witness")
    if out:
        _add(json.loads(out))


def pytest_terminal_summary(terminalreporter):
    if WITNESS is None or not _totals:
        return
    s = _totals
    skipped = ", ".join(f"{v} {k[len('skipped: '):]}" for k, v in sorted(s.items()) if k.startswith("skipped: "))
    terminalreporter.write_line(
        f"witness check: {s.get('theorems', 0)} theorems made, {s.get('checked', 0)} statements checked, "
        f"{s.get('cached', 0)} repeats, {s.get('failed', 0)} false; skipped {skipped or 'none'}; "
        f"{s.get('seconds', 0.0):.1f} s")


# -- expensive folders made once per run, shared by the xdist workers -----------------------


@pytest.fixture(scope="session")
def made_once(tmp_path_factory):
    """``made_once(name, make)``: ``make(folder)`` (a fresh folder; it returns the path
    the tests read, a folder that no test changes) run once for the whole test run: under
    xdist the first worker to ask makes it, under a lock, in the folder all workers share,
    and the others wait for it and read the same files (a rendered ViT is 10 to 20 s of
    work that each worker would otherwise repeat)."""
    import fcntl
    from pathlib import Path

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else None

    def make_once(name: str, make):
        if shared is None:
            return make(tmp_path_factory.mktemp(name))
        done = shared / f"{name}.done"
        with open(shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                folder = shared / f"{name}.made"
                if folder.exists():                 # a worker that failed to make it left it half made
                    import shutil
                    shutil.rmtree(folder)
                folder.mkdir()
                done.write_text(str(make(folder)))
            return Path(done.read_text())

    return make_once


# -- xdist: tests that share an expensive fixture run in one worker ----------------------------
# With ``-n`` and the default distribution (``load``), the tests are handed out one by one,
# except those of the files below, handed out together as one unit: the files that read a
# session fixture made once (a rendered ViT, the HTML site) or a module fixture that costs
# seconds (the example network trained; a forked CLI server). The fixture is then made in
# one worker, not in each, and the work after it finds that worker's caches warm (a tie of
# the rendered ViT costs about 12 s of CPU in a process that has not made it, 4 s in one
# that has). Units are handed out largest first (xdist's LoadScopeScheduling).

SHARED = {
    "render": ("tests/render/test_drop_path.py", "tests/render/test_emit.py", "tests/render/test_tie.py",
               "tests/render/test_tie_edits.py", "tests/render/test_render_command.py"),
    "site": ("tests/report/test_site.py", "tests/report/test_browser.py"),
    "own_network": ("tests/run/test_own_network.py",),
    "run_cli": ("tests/run/test_cli.py",),
    "contract": ("tests/cli/test_contract.py",),
}
_UNIT_OF_FILE = {f: unit for unit, files in SHARED.items() for f in files}


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "load":
        return None                             # a distribution asked for on the command line
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return _UNIT_OF_FILE.get(nodeid.split("::", 1)[0], nodeid)

    return SharedFixtureScheduling(config, log)
