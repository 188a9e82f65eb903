"""paddle.nn.layer.activation: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.activation import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                                  LogSigmoid, LogSoftmax, Maxout, Mish, PReLU, RReLU, ReLU, ReLU6, SELU, Sigmoid,
                                  Silu, Softmax, Softplus, Softshrink, Softsign, Swish, Tanh, Tanhshrink,
                                  ThresholdedReLU)
from pycoll.nn.image_layers import Softmax2D

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
           "LogSoftmax", "Maxout", "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "Sigmoid", "Silu", "Softmax",
           "Softmax2D", "Softplus", "Softshrink", "Softsign", "Swish", "Tanh", "Tanhshrink", "ThresholdedReLU"]
