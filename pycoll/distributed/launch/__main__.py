"""``python -m pycoll.distributed.launch``: the launcher under paddle's name
(``python -m paddle.distributed.launch``); ``python -m pycoll.launch`` with paddle's default of
``--log_dir log``, whose logs are also shown on the terminal as they grow."""
import sys

from pycoll.launch import main

if __name__ == "__main__":
    sys.exit(main(paddle_entry=True))
