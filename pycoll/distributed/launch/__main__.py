"""``python -m pycoll.distributed.launch``: the launcher under paddle's name
(``python -m paddle.distributed.launch``); the same as ``python -m pycoll.launch``."""
import sys

from pycoll.launch import main

if __name__ == "__main__":
    sys.exit(main())
