"""paddle's ``fleet.layers.mpu.mp_ops`` path (also reached as ``paddle.distributed.collective``'s
``_c_identity`` / ``_c_concat``, which PaddleNLP's ``parallel_matmul`` calls): the autograd
collectives of tensor parallelism and ``split``, pycoll's own from ``pycoll.parallel``."""
from pycoll.parallel import split
from pycoll.parallel.mp_ops import _c_concat, _c_identity, _c_softmax_with_cross_entropy, _c_split, _mp_allreduce

__all__ = ["_c_concat", "_c_identity", "_c_softmax_with_cross_entropy", "_c_split", "_mp_allreduce", "split"]
