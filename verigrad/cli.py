"""The ``verigrad`` command."""
from __future__ import annotations

import argparse
import sys

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="verigrad", description="Verified deep learning: proofs about tensors, "
                                "backward passes certified for every size, training on the certified graph.")
    p.add_argument("--version", action="version", version=f"verigrad {__version__}")
    p.add_subparsers(dest="command", metavar="COMMAND")
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
