"""Theorem files run in worker processes that answer in JSON, never in pickle.

Why a worker: a theorem file is code, and code can rebind anything in the process that
runs it, the kernel included (red team RT8-C1: a file that wrapped the kernel's
``theorem._prove_equal`` made ``verigrad verify`` report ``x + 1 = x + 2`` proved). So
the process that reports ``verify``'s verdicts never imports a theorem file: workers run
them, and the parent believes of a worker's answer only what it checks itself (a
"proved" stands when the parent's kernel replays the trace that came with it, see
``library._confirmed``).

Why JSON: a worker that ran a hostile file is hostile too, and unpickling its answer
(as ``concurrent.futures`` and ``Connection.recv`` do) would run its code in the parent.
Bytes go over the pipe, and the parent parses them with ``json.loads``, which builds
data and runs nothing.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import struct
import time
import warnings
from multiprocessing.connection import wait
from typing import Callable, Iterable

# Why a worker's answer could not be read (then the job counts as failed, never proved).
DIED = "the worker stopped without answering"
TIMED_OUT = "timed out: no answer after {:g} s (the time limit, --timeout)"
LARGEST_ANSWER = 1 << 28           # bytes; a larger one is refused unread


def _serve(conn, job_fn: Callable, init: Callable | None):
    """A worker's loop: one JSON job in, one JSON answer out, until the parent sends null."""
    if init is not None:
        init()
    while True:
        try:
            job = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            answer = {"ok": job_fn(job)}
        except BaseException as e:  # noqa: BLE001 - whatever the job does, the worker answers
            answer = {"error": f"{type(e).__name__}: {e}"}
        conn.send_bytes(json.dumps(answer).encode())


def _context():
    """Fork where there is fork: a worker starts at once, with the parent's modules. (A
    process that has loaded JAX has threads, and a forked child must not wait on a lock
    one of them held; a worker runs theorem files, the kernel and NumPy, never JAX.)
    Spawn elsewhere (a fresh interpreter, which imports what a job needs)."""
    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


class _Worker:
    def __init__(self, ctx, job_fn, init):
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, args=(child, job_fn, init), daemon=True)
        with warnings.catch_warnings():     # JAX's warning at a fork: see ``_context``
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called")
            self.proc.start()
        child.close()
        self.job, self.started = None, 0.0

    def give(self, job):
        self.job, self.started = job, time.monotonic()
        self.conn.send_bytes(json.dumps(job).encode())

    def answer(self, timeout: float | None = None):
        """``(answer, None)`` or ``(None, why not)``: the job's answer, parsed as data.
        Read here from the pipe's bytes, in ``Connection``'s framing (a length, then the
        message), not by ``recv_bytes``: that would wait without end for the rest of a
        message a worker began, and a time limit must hold against any worker."""
        deadline = None if timeout is None else self.started + timeout
        try:
            size, = struct.unpack("!i", self._read(4, deadline))
            if size == -1:
                size, = struct.unpack("!Q", self._read(8, deadline))
            if not 0 <= size <= LARGEST_ANSWER:
                return None, f"the worker's answer has {size} bytes (at most {LARGEST_ANSWER} are read)"
            got = json.loads(self._read(size, deadline))
        except TimeoutError:                # (an OSError)
            return None, TIMED_OUT.format(timeout)
        except (EOFError, OSError):
            return None, DIED
        except (ValueError, RecursionError) as e:
            return None, f"the worker's answer is not JSON: {e}"
        if isinstance(got, dict) and "ok" in got:
            return got["ok"], None
        return None, str(got.get("error")) if isinstance(got, dict) else "a malformed answer"

    def _read(self, n: int, deadline: float | None) -> bytes:
        out, fd = bytearray(), self.conn.fileno()
        while len(out) < n:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and (left <= 0 or not wait([fd], timeout=left)):
                raise TimeoutError
            chunk = os.read(fd, min(n - len(out), 1 << 20))
            if not chunk:
                raise EOFError
            out += chunk
        return bytes(out)

    def stop(self, at_once: bool = False):
        try:
            self.conn.send_bytes(b"null")
        except OSError:
            pass
        self.proc.join(timeout=0 if at_once else 5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def run_jobs(jobs: Iterable, job_fn: Callable, workers: int, on_answer: Callable, init: Callable | None = None,
             timeout: float | None = None):
    """Run ``job_fn(job)`` for each JSON-able job in up to ``workers`` worker processes
    (``init()`` first in each), calling ``on_answer(job, answer, error)`` in this process
    as each finishes: ``answer`` is what ``job_fn`` returned, as parsed JSON, or None with
    ``error`` saying why. A worker whose job fails, that dies, or that has not answered
    ``timeout`` seconds after it was given its job, is replaced; its job is answered with
    the error. A job marked ``"alone": true`` (code not to be trusted) is the last its
    worker runs: what that code left in the worker (a patched function, a forged answer
    queued on the pipe) cannot touch another job's answer."""
    todo = list(jobs)[::-1]
    if not todo:
        return
    ctx = _context()
    pool = []
    try:
        for _ in range(max(1, min(workers, len(todo)))):
            w = _Worker(ctx, job_fn, init)
            w.give(todo.pop())
            pool.append(w)
        while any(w.job is not None for w in pool):
            busy = {w.conn: w for w in pool if w.job is not None}
            left = None if timeout is None else max(0.0, min(w.started for w in busy.values()) + timeout
                                                     - time.monotonic())
            ready = [busy[c] for c in wait(list(busy), timeout=left)]
            if not ready:                  # the longest-running job is past its time: stop its worker
                ready = [min(busy.values(), key=lambda w: w.started)]
            for w in ready:
                answer, error = w.answer(timeout)
                job, w.job = w.job, None
                # an error leaves the worker stuck, dead, or its pipe mid-message; "alone": not to be trusted again
                if error is not None or job.get("alone"):
                    w.stop(at_once=error is not None)
                    pool.remove(w)
                    w = None
                on_answer(job, answer, error)
                if todo:
                    if w is None:
                        w = _Worker(ctx, job_fn, init)
                        pool.append(w)
                    w.give(todo.pop())
    finally:
        for w in pool:
            w.stop()
