"""``python -m pycoll.bench OP [flags]``: see :mod:`pycoll.bench.cli`."""
import sys

from pycoll.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
