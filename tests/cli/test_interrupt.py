"""Ctrl-C stops a long command within a second or two (exit code 130), with one line
and no traceback, and no exception leaks from a callback ("Exception ignored in ...").

Each command runs in a fresh process; SIGINT is sent once it is visibly at work (its
progress line on stderr, which is not a terminal here)."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 2.5          # seconds from SIGINT to the exit (the watchdog acts at 1.5 s)

CASES = [
    ("train", ["train", "mlp", "--epochs", "500", "--out", "r"], "train mlp: epoch 1"),
    ("certificates", ["certificates", "--only", "layers"], "certify 2/"),
    ("html", ["html", "--out", "site", "--no-cache", "--no-certificates", "-j", "1"], "verify 2/"),
    ("render", ["render", "vit", "--out", "r"], "render: certify the pieces"),
]


@pytest.mark.parametrize("argv, marker", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ctrl_c_stops_within_seconds(argv, marker, tmp_path):
    env = dict(os.environ, JAX_PLATFORMS="cpu", VERIGRAD_WITNESS="0", VERIGRAD_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "verigrad.cli", *argv], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen, lines = threading.Event(), []

    def read():
        for line in p.stderr:
            lines.append(line)
            if marker in line:
                seen.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert seen.wait(300), "".join(lines)
        assert p.poll() is None, "finished before it could be interrupted"
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
    reader.join(5)
    err = "".join(lines)
    assert p.returncode == 130, (p.returncode, err)
    assert took < LIMIT, f"{took:.2f} s after Ctrl-C"
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.rstrip().splitlines()[-1] == "verigrad: interrupted", err


SCRIPT = '''
import gc, os, signal, time
from verigrad.interrupts import stop_on_interrupt

def callback(phase, info):              # as JAX's _xla_gc_callback: Python code the collector runs
    if phase == "start" and not getattr(callback, "done", False):
        callback.done = True
        os.kill(os.getpid(), signal.SIGINT)
        t = time.time()
        while time.time() - t < 0.3:    # the signal arrives while the callback runs
            pass

gc.callbacks.append(callback)
try:
    with stop_on_interrupt():
        gc.collect()
        time.sleep(2)
        print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after the callback")
'''


def test_ctrl_c_inside_a_gc_callback_is_raised_after_it():
    """Raised inside a collector's callback, KeyboardInterrupt would be printed as
    "Exception ignored in ..." and lost; it is raised once the callback has returned."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.strip() == "interrupted after the callback", r.stdout + r.stderr
    assert "Exception ignored" not in r.stderr, r.stderr
