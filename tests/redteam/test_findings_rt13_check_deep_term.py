"""Red team RT13 (helper): ``verigrad check`` ends in a Python traceback (RecursionError)
on an honest trace of a deep term, instead of printing the claim or refusing it clearly
(fixed 2026-12-03: the statement reads "not printed: ... nested deeper than the printer
can go"; the verdict is the replay's).

Reproduction: ``t = x + x + ... + x`` (800 nested ``Add``s, each ``Add((prev, x))``),
``write_trace(path, [("deep", refl(t))])`` (the writer itself makes the trace; nothing is
edited), then ``verigrad check path``. The fresh checking process replays the trace and
reports PROVED (its decoder and the kernel build the term bottom-up, without recursion),
but the parent process then prints the recorded statement with the printer
(``verigrad.report.printing``), which recurses once per level: at 800 levels it raises
``RecursionError`` and the command dies with a traceback (exit 1), past the CLI's error
handling. A trace is untrusted input; ``check`` should either print the statement or say,
in one line, why it cannot (as ``replay.main`` already does for a RecursionError in the
replay itself).
"""
import subprocess
import sys

from verigrad.kernel import refl
from verigrad.kernel import terms as T
from verigrad.trace import write_trace


def test_check_of_a_deep_term_gives_no_traceback(tmp_path):
    x = T.Var("x", ())
    t = x
    for _ in range(800):
        t = T.Add((t, x))
    path = write_trace(tmp_path / "deep.trace.json", [("deep", refl(t))])
    done = subprocess.run([sys.executable, "-m", "verigrad.cli", "check", str(path)], capture_output=True, text=True,
                          timeout=600)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "RecursionError" not in done.stdout + done.stderr
    assert done.returncode == 0 and "PROVED deep" in done.stdout, done.stdout[-2000:]
    assert "not printed" in done.stdout
