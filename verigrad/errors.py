"""The exceptions verigrad raises on purpose, under one base class (untrusted code).

``VerigradError`` is the base of every exception verigrad raises on purpose, so that
``except verigrad.VerigradError`` catches them all (the kernel's ``KernelError``, the
importers' ``JaxprImportError`` and ``StableHLOError``, certify's ``BadInput``, the render
tie's ``NotTied``, checkpoints, manifests, ...). Each keeps its own name; those that were
``ValueError`` or ``RuntimeError`` still are.

The command line turns two of them into one line on stderr, no traceback:

- ``CommandLineError``: the command line itself is wrong (an option's value out of its
  range, options that do not go together): exit code 2, as argparse's own errors.
- ``UsageError``: the input the command line points at is bad (a missing or unreadable
  file, a folder that cannot be written, a name that is not in the library): exit code 3.

The base lives at the bottom of the kernel (``verigrad/kernel/sizes.py``): the kernel
imports nothing from the rest of verigrad, so it cannot take it from here, and its
``KernelError`` is one. This module imports nothing else from verigrad, so any module
can import it.
"""
from __future__ import annotations

from verigrad.kernel.sizes import VerigradError  # noqa: F401  (defined at the bottom: the kernel's KernelError is one)


class UsageError(VerigradError):
    """Bad input: the message names the problem and where it is (the CLI's exit code 3)."""


class CommandLineError(UsageError):
    """A command line that cannot be run as given (the CLI's exit code 2, as argparse's
    errors): an option's value out of its range, options that do not go together."""


EXIT_ARGUMENTS = 2
EXIT_BAD_INPUT = 3


def exit_code(e: UsageError) -> int:
    return EXIT_ARGUMENTS if isinstance(e, CommandLineError) else EXIT_BAD_INPUT
