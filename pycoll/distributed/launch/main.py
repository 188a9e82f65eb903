"""paddle's ``paddle.distributed.launch`` function (``launch.main.launch``): the launcher run from
Python, on this process's command line, as ``python -m pycoll.distributed.launch`` runs it."""
import sys

from pycoll.launch import main


def launch() -> None:
    """Start the job ``sys.argv`` describes (``--nproc_per_node N script.py args``, paddle's log
    folder ``log`` by default) and exit with its status, as paddle's ``launch()`` does."""
    sys.exit(main(sys.argv[1:], paddle_entry=True))
