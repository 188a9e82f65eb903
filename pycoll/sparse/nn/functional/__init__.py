"""paddle.sparse.nn.functional: activations on the stored values of a sparse tensor."""
from pycoll.sparse.nn.functional.activation import leaky_relu, relu, relu6, softmax

__all__ = ["relu", "relu6", "leaky_relu", "softmax"]
