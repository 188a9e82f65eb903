"""paddle.sparse.nn.functional: activations, sparse convolutions, max pooling and attention."""
from pycoll.sparse.nn.functional.activation import leaky_relu, relu, relu6, softmax
from pycoll.sparse.nn.functional.conv import (conv2d, conv3d, max_pool3d, subm_conv2d, subm_conv2d_igemm, subm_conv3d,
                                              subm_conv3d_igemm)
from pycoll.sparse.nn.functional.transformer import attention

__all__ = ["conv2d", "conv3d", "subm_conv2d", "subm_conv2d_igemm", "subm_conv3d", "subm_conv3d_igemm", "max_pool3d",
           "relu", "relu6", "leaky_relu", "softmax", "attention"]
