"""Errors shared across verigrad (untrusted code).

``UsageError`` is bad input: the message names the problem and where it is; the CLI
prints it on one line (no traceback) and exits with code 3. It lives here, not in
``verigrad.cli``, so that it is one class even when the CLI runs as ``__main__``.
"""


class UsageError(Exception):
    """Bad input: the message names the problem and where it is."""
