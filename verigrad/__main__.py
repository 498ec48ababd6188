"""``python -m verigrad ...``: the ``verigrad`` command, for an environment whose scripts
folder is not on the PATH."""
import sys

from verigrad.cli import main

if __name__ == "__main__":      # not when a spawned worker process imports this module again
    sys.exit(main())
