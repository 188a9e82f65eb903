"""``paddle.incubate``'s pieces that scripts still use: the functional autograd (`autograd`) and
the segment reductions (``pycoll.geometric``'s)."""
from pycoll.incubate import autograd
from pycoll.geometric.segment import segment_max, segment_mean, segment_min, segment_sum

__all__ = ["autograd", "segment_sum", "segment_mean", "segment_max", "segment_min"]
