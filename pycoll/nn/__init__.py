"""Layers, parameters, initializers and losses (paddle.nn names)."""
from pycoll.nn import functional, initializer
from pycoll.nn.activation import GELU, ReLU, Sigmoid, Softmax, Tanh
from pycoll.nn.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from pycoll.nn.common import Dropout, Embedding, Linear
from pycoll.nn.container import LayerList, Sequential
from pycoll.nn.layer import Layer
from pycoll.nn.loss import CrossEntropyLoss, MSELoss
from pycoll.nn.norm import LayerNorm
from pycoll.nn.parameter import Parameter, ParamAttr

__all__ = ["functional", "initializer", "Layer", "Parameter", "ParamAttr", "Linear", "Embedding",
           "Dropout", "Sequential", "LayerList", "ReLU", "Tanh", "Sigmoid", "GELU", "Softmax",
           "LayerNorm", "MSELoss", "CrossEntropyLoss", "ClipGradByValue", "ClipGradByNorm",
           "ClipGradByGlobalNorm"]
