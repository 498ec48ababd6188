"""``python -m verigrad ...``: the ``verigrad`` command, for an environment whose scripts
folder is not on the PATH."""
import sys

from verigrad.cli import main

sys.exit(main())
