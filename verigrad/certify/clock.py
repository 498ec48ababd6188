"""Time limits for certify (untrusted; it can only turn a verdict into UNKNOWN).

Three kinds of limit:

* ``deadline(at, what)``: raise ``Timeout`` in the main thread at time ``at`` (a
  ``time.perf_counter()`` value), by ``SIGALRM``. Deadlines nest: the alarm is set for the
  earliest, and a ``Timeout`` names the deadline that passed, so a per-claim limit ends
  its claim while the limit of the whole run ends the run. ``Timeout`` is a
  ``BaseException``: the user's code (``except Exception:``) cannot swallow it.
* ``memory_guard(limit)``: raise ``MemoryLimit`` (a ``Timeout``) in the main thread once
  the process's resident memory passes ``limit`` bytes, sampled by a thread every 50 ms
  and delivered as a ``SIGALRM``. The kernel's work budget bounds a decision's steps,
  not its memory: an unrolled nonlinear ``scan`` can fill the machine before the clock
  runs out, and a process the system kills for memory says nothing at all.
* ``Watchdog``: a thread that ends the process with ``os._exit`` when Python cannot act,
  for the command line only: past the run's deadline plus a grace period (a C extension
  that ignores signals, such as a long XLA compile), or a second after Ctrl-C that the
  main thread has not acted on. Before exiting it prints what it was told to print
  (the UNKNOWN report), so the command keeps its contract: the last line is one word.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager


class Timeout(BaseException):
    """A deadline passed; ``what`` names it ('the run', 'the claim')."""

    def __init__(self, what: str = "the run", limit: float | None = None):
        super().__init__(what)
        self.what, self.limit = what, limit


class MemoryLimit(Timeout):
    """The process passed its memory limit (``limit`` in bytes)."""

    def __str__(self):
        return f"the process passed its memory limit of {self.limit / 2**30:.1f} GiB"


_stack: list = []       # [(at, what, limit, token)], the active deadlines of the main thread
_over: list = []        # [(what, limit)] once a memory guard saw its limit passed


def _arm():
    if not _stack:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    at = min(d[0] for d in _stack)
    signal.setitimer(signal.ITIMER_REAL, max(at - time.perf_counter(), 1e-4))


def _fire(signum, frame):
    from verigrad.interrupts import inside_gc_callback
    if _over:
        signal.setitimer(signal.ITIMER_REAL, 0.05)     # again soon if it cannot be raised here
        if not inside_gc_callback(frame):
            what, limit = _over.pop()
            _arm()
            raise MemoryLimit(what, limit)
        return
    now = time.perf_counter()
    due = [d for d in _stack if d[0] <= now + 1e-3]
    if not due:
        _arm()
        return
    # the outermost deadline that passed wins: it ends more
    at, what, limit, token = due[0]
    # fire again soon: raised inside a gc callback the exception would be printed and
    # swallowed, so there it is not raised at all; leaving the deadline's block disarms it
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    if not inside_gc_callback(frame):
        raise Timeout(what, limit)


@contextmanager
def deadline(at: float | None, what: str = "the run", limit: float | None = None):
    """Raise ``Timeout(what)`` at ``at``, in the main thread (elsewhere: no limit; the
    callers also check ``expired``)."""
    if at is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    if at - time.perf_counter() <= 0:
        raise Timeout(what, limit)
    token = object()
    first = not _stack
    old = signal.signal(signal.SIGALRM, _fire) if first else None
    _stack.append((at, what, limit, token))
    _arm()
    try:
        yield
    finally:
        _stack[:] = [d for d in _stack if d[3] is not token]
        _arm()
        if first:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def resident_bytes() -> int | None:
    """The process's resident memory in bytes (None where /proc cannot be read)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def default_memory_limit() -> int | None:
    """Three quarters of what this process may hold now: its resident memory plus the
    memory the system has available (``MemAvailable``); None where unknown."""
    rss = resident_bytes()
    try:
        with open("/proc/meminfo") as f:
            avail = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return None if rss is None else int(0.75 * (rss + avail))


@contextmanager
def memory_guard(limit: int | None, what: str = "the claim"):
    """Raise ``MemoryLimit(what, limit)`` in the main thread once the resident memory
    passes ``limit`` bytes (no limit: ``None``, or outside the main thread). Each block
    starts afresh: a limit passed in one block is not raised in the next; a block entered
    above its limit stops at once."""
    rss = resident_bytes()
    if limit is None or threading.current_thread() is not threading.main_thread() or rss is None:
        yield
        return
    if rss > limit:
        raise MemoryLimit(what, limit)
    stop, main = threading.Event(), threading.main_thread().ident

    def watch():
        while not stop.wait(0.05):
            rss = resident_bytes()
            if rss is not None and rss > limit:
                _over[:] = [(what, limit)]
                signal.pthread_kill(main, signal.SIGALRM)
                return

    old = signal.signal(signal.SIGALRM, _fire)
    watcher = threading.Thread(target=watch, name="verigrad-memory", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        _over.clear()
        if not _stack:
            signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def process_age() -> float:
    """Seconds since this process started (0 where that cannot be read): a limit on the
    command line counts from the launch, start-up included."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return max(0.0, up - start)
    except (OSError, ValueError, IndexError):
        return 0.0


def expired(at: float | None) -> bool:
    return at is not None and time.perf_counter() >= at


class Watchdog:
    """The command line's last resort (see the module docstring). ``final`` is a
    callable returning the text to print before a forced exit."""

    def __init__(self, at: float | None, grace: float = 2.5, final=None, code: int = 2):
        self.at, self.grace, self.final, self.code = at, grace, final, code
        self._stop = threading.Event()
        self._interrupted = None
        self._rfd = self._wfd = None
        self._old_wakeup = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            try:
                self._rfd, self._wfd = os.pipe()
                os.set_blocking(self._wfd, False)
                self._old_wakeup = signal.set_wakeup_fd(self._wfd, warn_on_full_buffer=False)
            except (ValueError, OSError):
                self._rfd = self._wfd = None
        threading.Thread(target=self._watch, name="verigrad-watchdog", daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._wfd is not None:
            try:
                signal.set_wakeup_fd(self._old_wakeup if self._old_wakeup is not None else -1)
            except (ValueError, OSError):
                pass
            for fd in (self._rfd, self._wfd):
                try:
                    os.close(fd)
                except OSError:
                    pass
        return False

    def _watch(self):
        import select
        while not self._stop.is_set():
            now = time.perf_counter()
            if self.at is not None and now > self.at + self.grace:
                self._exit(self.code, f"timed out: the limit of the run passed and the work in progress "
                                      f"did not stop within {self.grace:g} s")
            if self._interrupted is not None and now > self._interrupted + 1.0:
                self._exit(130, "interrupted")
            if self._rfd is not None:
                try:
                    ready, _, _ = select.select([self._rfd], [], [], 0.1)
                except (OSError, ValueError):
                    ready = []
                if ready:
                    try:
                        data = os.read(self._rfd, 64)
                    except OSError:
                        data = b""
                    if any(b == signal.SIGINT for b in data) and self._interrupted is None:
                        self._interrupted = time.perf_counter()
            else:
                self._stop.wait(0.1)

    def _exit(self, code: int, why: str):
        if self._stop.is_set():
            return
        try:
            text = self.final(code, why) if self.final else why
            if text:
                print(text, flush=True)
            sys.stderr.flush()
        finally:
            os._exit(code)
