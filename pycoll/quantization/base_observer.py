"""`BaseObserver`: a quanter that only watches (PTQ) and computes its thresholds when asked."""
from __future__ import annotations

import abc

from pycoll.quantization.base_quanter import BaseQuanter


class BaseObserver(BaseQuanter, metaclass=abc.ABCMeta):
    """Built-in and customized observers extend this and implement ``cal_thresholds``."""

    @abc.abstractmethod
    def cal_thresholds(self) -> None:
        """Compute the scales (and zero points) from what has been observed."""
