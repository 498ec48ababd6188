"""The ``verigrad`` command.

Each subcommand lives in the package that owns it, as a module ``command.py`` with
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. A subcommand
reports bad input by raising ``UsageError`` (or returning 3): one line on stderr, no
traceback.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from . import __version__
from .errors import UsageError  # noqa: F401  (re-exported: subcommands raise it)

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

EXIT_BAD_INPUT = 3


def _commands():
    out = []
    for name in COMMANDS:
        if importlib.util.find_spec(name) is not None:
            out.append(importlib.import_module(name))
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def build_parser():
    p = _Parser(prog="verigrad", description="Verified deep learning: proofs about tensors, "
                "backward passes certified for every size, training on the certified graph.")
    p.add_argument("--version", action="version", version=f"verigrad {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    handlers = {}
    for mod in _commands():
        sp = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
        handlers[mod.NAME] = mod.run
    return p, handlers


def main(argv=None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(handlers[args.command](args) or 0)
    except UsageError as e:
        print(f"verigrad {args.command}: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
