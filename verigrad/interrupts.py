"""Ctrl-C that acts within about two seconds, and exceptions that never leak from callbacks.

Python turns SIGINT into ``KeyboardInterrupt`` only between bytecodes of the main
thread: a long call into XLA (a compile), numpy, or a wait on worker processes delays
it for as long as the call lasts. And an exception raised while the garbage collector
runs a callback (JAX registers ``_xla_gc_callback``) is swallowed there with
"Exception ignored in ...", so the command goes on.

``stop_on_interrupt()`` installs a SIGINT handler that

- raises ``KeyboardInterrupt`` as usual, so ``finally`` blocks and atomic writes (the
  checkpoint's temporary file and ``os.replace``) still run when Python gets there;
- if the signal arrives inside a garbage-collector callback, raises it a moment later
  instead, once the callback has returned;
- starts a watchdog: if the process has not exited ``grace`` seconds after the first
  Ctrl-C, it says so, stops the worker processes it started and exits with code 130;
- exits at once on a second Ctrl-C.

Nothing written atomically is lost: a file is either the old one or the new one.
"""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

GRACE = 1.5                     # seconds from the first Ctrl-C to the forced exit
EXIT_INTERRUPTED = 130

_state = {"since": None, "said": False}


def inside_gc_callback(frame) -> bool:
    """Whether ``frame`` (or a caller of it) runs a callback of the garbage collector,
    where a raised exception would be swallowed."""
    codes = {getattr(cb, "__code__", None) for cb in gc.callbacks} - {None}
    depth = 0
    while frame is not None and depth < 50:
        if frame.f_code in codes:
            return True
        frame, depth = frame.f_back, depth + 1
    return False


def say_interrupted():
    """Print the one line an interrupted command ends with (once, and only in the process
    that installed the handler: a forked worker that inherited it stays quiet)."""
    if not _state["said"] and _state.get("pid") in (None, os.getpid()):
        _state["said"] = True
        try:
            sys.stderr.write("verigrad: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def exit_now():
    """Say so, stop the worker processes this process started, and exit with 130 at
    once (no interpreter teardown)."""
    say_interrupted()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    mp = sys.modules.get("multiprocessing")
    if mp is not None:
        for child in mp.active_children():
            try:
                child.kill()
            except (OSError, ValueError, AttributeError):
                pass
    os._exit(EXIT_INTERRUPTED)


def _watchdog(grace: float):
    time.sleep(grace)
    exit_now()


def _handler(signum, frame):
    if _state["since"] is not None:              # a second Ctrl-C: stop now
        exit_now()
    if inside_gc_callback(frame):                # raised here it would be swallowed: raise it just after
        threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT)).start()
        return
    _state["since"] = time.monotonic()
    threading.Thread(target=_watchdog, args=(_state["grace"],), daemon=True, name="verigrad-interrupt").start()
    raise KeyboardInterrupt


@contextmanager
def stop_on_interrupt(grace: float = GRACE):
    """Within the block, Ctrl-C stops the process within ``grace`` seconds (see above).
    Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state.update(since=None, said=False, grace=grace, pid=os.getpid())
    previous = signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
