"""Layers, parameters, initializers and losses (paddle.nn names)."""
from pycoll.nn import functional, initializer
from pycoll.nn.activation import ELU, GELU, Hardswish, LeakyReLU, ReLU, Sigmoid, Silu, Softmax, Softplus, Tanh
from pycoll.nn.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from pycoll.nn.common import Dropout, Embedding, Flatten, Identity, Linear
from pycoll.nn.container import LayerDict, LayerList, ParameterList, Sequential
from pycoll.nn.layer import Layer
from pycoll.nn.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss,
                            NLLLoss, SmoothL1Loss)
from pycoll.nn.norm import LayerNorm
from pycoll.nn.parameter import Parameter, ParamAttr

__all__ = ["functional", "initializer", "Layer", "Parameter", "ParamAttr", "Linear", "Embedding",
           "Dropout", "Flatten", "Identity", "Sequential", "LayerList", "LayerDict", "ParameterList",
           "ReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LeakyReLU", "Silu", "ELU", "Softplus",
           "Hardswish", "LayerNorm", "MSELoss", "L1Loss", "SmoothL1Loss", "BCELoss",
           "BCEWithLogitsLoss", "NLLLoss", "KLDivLoss", "CrossEntropyLoss", "ClipGradByValue",
           "ClipGradByNorm", "ClipGradByGlobalNorm"]
