"""The ``verigrad`` command.

Each subcommand lives in the package that owns it, as a module ``command.py`` with
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.

The contract every subcommand keeps (``docs/cli.md``; ``tests/cli/test_contract.py``
runs each bad input through this entry point):

- a command line argparse cannot read, or an option's value out of its range, is one
  line on stderr and exit code 2 (``CommandLineError``, or argparse's own error);
- bad input (a missing or unreadable file, a folder that cannot be written, a name
  that is not there) is one line and exit code 3 (``UsageError``, and any other
  ``VerigradError`` or ``OSError`` that reaches this function);
- no traceback for either; Ctrl-C stops the command within about two seconds
  (exit code 130), whatever it is doing.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

from . import __version__
from .errors import CommandLineError, UsageError, VerigradError, exit_code  # noqa: F401  (re-exported)

# (module, ...) in the order shown by --help; a module that does not exist yet is skipped.
COMMANDS = (
    "verigrad.certify.command",      # verigrad certify
    "verigrad.proof.command",        # verigrad verify
    "verigrad.nn.command",           # verigrad certificates
    "verigrad.render.command",       # verigrad render
    "verigrad.run.command",          # verigrad train
    "verigrad.run.predict_command",  # verigrad predict
    "verigrad.report.command",       # verigrad html
    "verigrad.trace.command",        # verigrad check
)

EXIT_ARGUMENTS = 2
EXIT_BAD_INPUT = 3
EXIT_INTERRUPTED = 130


_PACKAGE = Path(__file__).resolve().parent


def _declared(name: str):
    """``(NAME, HELP)`` of the command module ``name``, read from its source without
    importing it (importing ``verigrad.render`` would import JAX, which ``verigrad
    certify --help`` or ``verigrad check`` do not need); None when the module does not
    exist. A module whose NAME or HELP is not a plain literal is imported instead."""
    path = _PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return _imported(name)
    found = {}
    for key in ("NAME", "HELP"):
        m = re.search(rf"^{key}\s*=", text, re.M)
        if m is None:
            break
        lines = text[m.start():].splitlines()
        for k in range(1, min(len(lines), 12) + 1):      # the assignment, over as many lines as it takes
            try:
                tree = ast.parse("\n".join(lines[:k]))
            except SyntaxError:
                continue
            try:
                found[key] = ast.literal_eval(tree.body[0].value)
            except (ValueError, AttributeError, IndexError):
                pass
            break
    if isinstance(found.get("NAME"), str) and isinstance(found.get("HELP"), str):
        return found["NAME"], found["HELP"]
    return _imported(name)


def _imported(name: str):
    if importlib.util.find_spec(name) is None:
        return None
    mod = importlib.import_module(name)
    return mod.NAME, mod.HELP


def _commands():
    """``[(module name, NAME, HELP)]`` of the commands that exist, in ``--help`` order."""
    out = []
    for name in COMMANDS:
        try:
            declared = _declared(name)
        except ModuleNotFoundError:
            declared = None
        if declared is not None:
            out.append((name,) + tuple(declared))
    return out


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (exit code 2) instead of usage + error."""

    def error(self, message):
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_ARGUMENTS)


def _chosen(argv, names) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the top-level
    options, ``--help`` and ``--version``, take no value)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in names else None
    return None


def build_parser(argv=None):
    """The parser and ``{command: run}``. Every command is listed (its name and help read
    from its module's source); only the one ``argv`` chooses is imported and given its
    options (all of them when ``argv`` is None)."""
    p = _Parser(prog="verigrad", description="Verified deep learning: proofs about tensors, "
                "backward passes certified for every size, training on the certified graph.")
    p.add_argument("--version", action="version", version=f"verigrad {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    handlers = {}
    commands = _commands()
    chosen = None if argv is None else _chosen(argv, {c[1] for c in commands})
    for module, name, help_text in commands:
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if argv is None or name == chosen:
            mod = importlib.import_module(module)
            mod.add_arguments(sp)
            handlers[mod.NAME] = mod.run
    return p, handlers


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# The garbage collector's thresholds while the process is one command (``main()``): JAX's
# import alone makes some 250 young collections and two full ones with the default 700
# (about 0.08 s of a 0.9 s ``verigrad certify``); reference counting frees almost
# everything these commands drop, so rarer collections cost no memory worth counting.
GC_THRESHOLDS = (50_000, 20, 20)


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: the process's own, ``sys.argv[1:]``).

    Without ``argv`` the process is this command: the collector runs less often while
    it works, and what is alive at its end is frozen (``gc.freeze``), so the
    interpreter's teardown does not walk JAX's object graph again (about 0.15 s). Called
    with ``argv`` (in-process, tests), the collector is left as it is."""
    import gc
    from .interrupts import exit_now, say_interrupted, stop_on_interrupt
    process = argv is None
    if process:
        gc.set_threshold(*GC_THRESHOLDS)
        # XLA's C++ INFO lines ("PjRt-IFRT device count ...") reach stderr when jaxlib's
        # MLIR bindings load before the first device (train, predict): warnings and
        # errors still show; an explicit TF_CPP_MIN_LOG_LEVEL wins
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    try:
        with stop_on_interrupt():
            return _main(argv)
    except KeyboardInterrupt:
        if argv is None:            # the process is this command: leave now, not after the libraries'
            exit_now()              # teardown (seconds for JAX's); every file was written atomically
        say_interrupted()
        return EXIT_INTERRUPTED
    finally:
        if process:
            gc.freeze()


def _main(argv) -> int:
    parser, handlers = build_parser(sys.argv[1:] if argv is None else list(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:             # argparse: an argument error (2, one line), or --help/--version (0)
        return e.code if isinstance(e.code, int) else EXIT_ARGUMENTS
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(handlers[args.command](args) or 0)
    except UsageError as e:
        print(f"verigrad {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return exit_code(e)
    except VerigradError as e:          # raised on purpose below a command that did not catch it
        print(f"verigrad {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:             # the reader went away (| head): nothing more to say
        _quiet_stdout()
        return 0
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"verigrad {args.command}: error: {where}{_one_line(e.strerror or e)}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _quiet_stdout():
    """After a broken pipe, point stdout at /dev/null so the flush at exit is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
