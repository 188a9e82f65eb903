"""``paddle.hapi.progressbar``: its ``ProgressBar`` is ``pycoll.hapi.progress.ProgressBar``."""
from pycoll.hapi.progress import ProgressBar

__all__ = ["ProgressBar"]
