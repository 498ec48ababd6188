"""``python -m verigrad.cli ARGS`` in a process of its own, without paying for JAX's
import each time (about 1 s of the 1.1 s a bad-input command takes).

A server process imports JAX and nothing of verigrad, then forks once per command: the
child changes to the command's folder, points file descriptors 0, 1 and 2 at /dev/null
and two files of its own, and runs ``verigrad.cli`` as ``__main__`` (``runpy``, as
``python -m`` does), so verigrad and the command's modules are imported afresh in every
child, ``main()`` runs as the process's own command, and the child exits through the
interpreter's normal teardown with the command's exit code. What a fresh process
would print while importing JAX is printed once, by the server, and ``start`` refuses
a server that printed anything. ``tests/cli/test_contract.py`` checks that a forked
run and a fresh one give the same exit code, stdout and stderr.

Run as a script, this file is the server: one JSON request a line on stdin
(``{"argv", "cwd", "out", "err"}``), one JSON answer a line on stdout (``{"code"}``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path


def _threads() -> int:
    return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1


def serve():                                          # the server (this file run as a script)
    import runpy

    import jax                                        # noqa: F401  (what every command's process imports)
    import jax.numpy                                  # noqa: F401
    if "verigrad" in sys.modules or any(m.startswith("verigrad.") for m in sys.modules):
        raise SystemExit("forked_cli: verigrad was imported before the fork")
    reply = os.fdopen(os.dup(1), "w")                # the answers' channel (fd 1 is the child's stdout)
    print(json.dumps({"ready": True, "threads": threading.active_count()}), file=reply, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:                                  # the child: the command, as `python -m verigrad.cli`
            reply.close()
            os.chdir(req["cwd"])
            fds = [os.open(os.devnull, os.O_RDONLY),
                   os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                   os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            sys.stdin = open(0, closefd=False)
            sys.path[0] = os.getcwd()                 # as `python -m` puts the working folder first
            sys.argv = ["-m", *req["argv"]]
            runpy.run_module("verigrad.cli", run_name="__main__", alter_sys=True)
            sys.exit(0)                               # main() returned without sys.exit: as the interpreter would
        timed_out = not _wait(pid, req.get("timeout", 300))
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status), "timed_out": timed_out}), file=reply,
              flush=True)


def _wait(pid, timeout) -> bool:
    """Whether the child ``pid`` ended within ``timeout`` seconds (it is not reaped)."""
    import select
    fd = os.pidfd_open(pid)
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class Server:
    """``run(argv, cwd)`` answers as ``subprocess.run([python, -m, verigrad.cli, *argv],
    cwd=cwd, env=env, capture_output=True, text=True)`` would."""

    def __init__(self, env: dict, scratch: Path):
        self.scratch = Path(scratch)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._log = open(self.scratch / "server.err", "w+")
        self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, text=True, env=env, cwd=self.scratch)
        first = self.proc.stdout.readline()
        if not first:
            raise RuntimeError(f"forked_cli server did not start: {self._server_output()}")
        if json.loads(first).get("threads") != 1 or self._server_output():
            self.close()
            raise RuntimeError(f"forked_cli server: importing JAX printed or started something: "
                               f"{first!r} {self._server_output()!r}")
        self.count = 0

    def _server_output(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def run(self, argv, cwd, timeout=300) -> Result:
        self.count += 1
        out, err = self.scratch / f"{self.count}.out", self.scratch / f"{self.count}.err"
        self.proc.stdin.write(json.dumps({"argv": list(argv), "cwd": str(cwd), "out": str(out),
                                          "err": str(err), "timeout": timeout}) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"forked_cli server died: {self._server_output()}")
        if self._server_output():
            raise RuntimeError(f"forked_cli server printed: {self._server_output()}")
        answer = json.loads(answer)
        if answer["timed_out"]:
            raise subprocess.TimeoutExpired(["verigrad", *argv], timeout, out.read_text(), err.read_text())
        return Result(answer["code"], out.read_text(), err.read_text())

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()


if __name__ == "__main__":
    serve()
