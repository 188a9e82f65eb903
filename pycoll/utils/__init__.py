"""``paddle.utils``'s pieces that scripts use: `dlpack` and `run_check`."""
from pycoll.utils import dlpack
from pycoll.utils.install_check import run_check

__all__ = ["dlpack", "run_check"]
