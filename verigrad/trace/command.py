"""``verigrad check TRACE...``: replay proof traces in a fresh process that loads only
the kernel (``verigrad.kernel.replay``), so a PROVED is trusted without trusting the
Python process that made it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

NAME = "check"
HELP = "replay proof traces with the kernel alone, in a fresh process"

# The fresh process gets a bare ``verigrad`` package (its __init__, which loads the
# printer and the untrusted search, is not run) and imports the kernel's replay only.
BOOT = """
import sys, types
pkg = types.ModuleType("verigrad")
pkg.__path__ = [sys.argv[1]]
sys.modules["verigrad"] = pkg
from verigrad.kernel.replay import main
sys.exit(main(sys.argv[2:], as_json="--json" in sys.argv[2:2]))
"""


def add_arguments(p):
    p.add_argument("traces", nargs="+", metavar="TRACE", help="proof trace files (JSON) to replay")
    p.add_argument("--json", action="store_true", help="one JSON object per claim")


def check(paths, as_json: bool = False) -> subprocess.CompletedProcess:
    """Run the checker on ``paths`` in a fresh, isolated interpreter."""
    root = str(Path(__file__).resolve().parents[1])
    boot = BOOT.replace('"--json" in sys.argv[2:2]', "True" if as_json else "False")
    return subprocess.run([sys.executable, "-I", "-c", boot, root, *map(str, paths)],
                          capture_output=True, text=True)


def run(args) -> int:
    from verigrad.errors import UsageError
    missing = [p for p in args.traces if not Path(p).is_file()]
    if missing:
        raise UsageError(f"no such trace file: {missing[0]}")
    done = check(args.traces, args.json)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode
