"""Layers, parameters, initializers and losses (paddle.nn names).

SyncBatchNorm lives with the parallel layers (it communicates, and the tensor side never imports
pycoll.distributed): `pycoll.nn.SyncBatchNorm` imports it on first access (PEP 562), as
`pycoll.nn.quant` is (paddle.nn.quant, which import pycoll need not load).
"""
from typing import Any, List

from pycoll.nn import decode, functional, init, initializer, utils
from pycoll.nn.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                                  LeakyReLU, LogSigmoid, LogSoftmax, Maxout, Mish, PReLU, ReLU, ReLU6, RReLU, Sigmoid,
                                  SiLU,
                                  Silu, Softmax, Softplus, Softshrink, Softsign, Swish, Tanh, Tanhshrink,
                                  ThresholdedReLU)
from pycoll.nn.attention import MultiHeadAttention
from pycoll.nn.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from pycoll.nn.common import Dropout, Dropout2D, Embedding, Flatten, Identity, Linear, Unflatten
from pycoll.nn.conv import Conv1D, Conv2D, Conv3D
from pycoll.nn.conv_transpose import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
from pycoll.nn.decode import BeamSearchDecoder, dynamic_decode
from pycoll.nn.container import LayerDict, LayerList, ParameterList, Sequential
from pycoll.nn.distance import CosineSimilarity, PairwiseDistance
from pycoll.nn.layer import Layer
from pycoll.nn.bilinear import Bilinear
from pycoll.nn.extra_losses import (CTCLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                                    PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from pycoll.nn.hierarchical_softmax import AdaptiveLogSoftmaxWithLoss, HSigmoidLoss
from pycoll.nn.image_layers import ChannelShuffle, Fold, LocalResponseNorm, Softmax2D, Unfold, ZeroPad2D
from pycoll.nn.noise_layers import AlphaDropout, Dropout3D, FeatureAlphaDropout
from pycoll.nn.parameter_dict import ParameterDict
from pycoll.nn.weight_norms import SpectralNorm, spectral_norm
from pycoll.nn.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HingeEmbeddingLoss,
                            KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelMarginLoss, NLLLoss,
                            RNNTLoss, SmoothL1Loss)
from pycoll.nn.norm import (BatchNorm, BatchNorm1D, BatchNorm2D, BatchNorm3D, GroupNorm, InstanceNorm1D,
                            InstanceNorm2D, InstanceNorm3D, LayerNorm)
from pycoll.nn.parameter import Parameter, ParamAttr
from pycoll.nn.pooling import (AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D, AdaptiveMaxPool1D,
                               AdaptiveMaxPool2D, AdaptiveMaxPool3D, AvgPool1D, AvgPool2D, AvgPool3D,
                               FractionalMaxPool2D, FractionalMaxPool3D, LPPool1D, LPPool2D, MaxPool1D, MaxPool2D,
                               MaxPool3D, MaxUnPool1D, MaxUnPool2D, MaxUnPool3D, Pad1D, Pad2D, Pad3D)
from pycoll.nn.pad_layers import (CircularPad1D, CircularPad2D, CircularPad3D, ConstantPad1D, ConstantPad2D,
                                   ConstantPad3D, ReflectionPad1D, ReflectionPad2D, ReflectionPad3D, ReplicationPad1D,
                                   ReplicationPad2D, ReplicationPad3D, ZeroPad1D, ZeroPad3D)
from pycoll.nn.rnn import GRU, LSTM, RNN, BiRNN, SimpleRNN
from pycoll.nn.rnn_cells import GRUCell, LSTMCell, RNNCellBase, SimpleRNNCell
from pycoll.nn.resample import (PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2D,
                                UpsamplingNearest2D)
from pycoll.nn.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                                    TransformerEncoderLayer)

__all__ = ["functional", "init", "initializer", "utils", "spectral_norm", "Layer", "Parameter", "ParamAttr", "Linear",
           "Embedding",
           "Dropout", "Flatten", "Identity", "Sequential", "LayerList", "LayerDict", "ParameterList",
           "ReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LeakyReLU", "Silu", "ELU", "Softplus",
           "Hardswish", "LayerNorm", "MSELoss", "L1Loss", "SmoothL1Loss", "BCELoss",
           "BCEWithLogitsLoss", "NLLLoss", "KLDivLoss", "CrossEntropyLoss", "ClipGradByValue",
           "ClipGradByNorm", "ClipGradByGlobalNorm", "Conv1D", "Conv2D", "MaxPool2D", "AvgPool2D",
           "AdaptiveAvgPool2D", "AdaptiveMaxPool2D", "Pad1D", "Pad2D", "BatchNorm", "BatchNorm1D", "BatchNorm2D",
           "BatchNorm3D", "SyncBatchNorm", "MaxPool1D", "AvgPool1D", "AdaptiveAvgPool1D", "AdaptiveMaxPool1D",
           "GroupNorm", "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D", "Dropout2D",
           "MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer", "ReLU6", "SiLU", "Swish", "Mish", "PReLU", "LogSoftmax",
           "Hardtanh", "Hardsigmoid", "Hardshrink", "Softshrink", "Softsign", "Tanhshrink", "ThresholdedReLU", "CELU",
           "SELU", "LogSigmoid", "GLU", "Maxout", "Upsample", "UpsamplingNearest2D", "UpsamplingBilinear2D",
           "PixelShuffle", "PixelUnshuffle", "Conv1DTranspose", "Conv2DTranspose", "CosineSimilarity",
           "PairwiseDistance", "MarginRankingLoss", "CosineEmbeddingLoss", "HingeEmbeddingLoss",
           "RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell", "RNN", "BiRNN", "SimpleRNN", "LSTM", "GRU",
           "Conv3D", "Conv3DTranspose", "MaxPool3D", "AvgPool3D", "AdaptiveAvgPool3D", "AdaptiveMaxPool3D",
           "MaxUnPool1D", "MaxUnPool2D", "MaxUnPool3D", "Pad3D",
           "Bilinear", "CTCLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
           "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
           "ChannelShuffle", "Fold", "LocalResponseNorm", "Softmax2D", "Unfold", "ZeroPad2D",
           "AlphaDropout", "Dropout3D", "FeatureAlphaDropout", "ParameterDict", "SpectralNorm",
           "ZeroPad1D", "ZeroPad3D", "ConstantPad1D", "ConstantPad2D", "ConstantPad3D", "ReflectionPad1D",
           "ReflectionPad2D", "ReflectionPad3D", "ReplicationPad1D", "ReplicationPad2D", "ReplicationPad3D",
           "CircularPad1D", "CircularPad2D", "CircularPad3D", "HuberLoss", "Unflatten", "RReLU",
           "HSigmoidLoss", "AdaptiveLogSoftmaxWithLoss", "MultiLabelMarginLoss", "LPPool1D", "LPPool2D",
           "FractionalMaxPool2D", "FractionalMaxPool3D", "decode", "BeamSearchDecoder", "dynamic_decode",
           "RNNTLoss"]

HuberLoss = SmoothL1Loss  # paddle's alias

# paddle 3.3's torch-style names: the same classes (paddle.nn.Conv2d is paddle.nn.Conv2D)
Module, ModuleList, ModuleDict = Layer, LayerList, LayerDict
Conv1d, Conv2d, Conv3d = Conv1D, Conv2D, Conv3D
AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D
AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d = AdaptiveMaxPool1D, AdaptiveMaxPool2D, AdaptiveMaxPool3D
MaxUnpool1d, MaxUnpool2d, MaxUnpool3d = MaxUnPool1D, MaxUnPool2D, MaxUnPool3D
ZeroPad1d, ZeroPad2d, ZeroPad3d = ZeroPad1D, ZeroPad2D, ZeroPad3D
ConstantPad1d, ConstantPad2d, ConstantPad3d = ConstantPad1D, ConstantPad2D, ConstantPad3D
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = ReflectionPad1D, ReflectionPad2D, ReflectionPad3D
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = ReplicationPad1D, ReplicationPad2D, ReplicationPad3D
CircularPad1d, CircularPad2d, CircularPad3d = CircularPad1D, CircularPad2D, CircularPad3D
UpsamplingBilinear2d, UpsamplingNearest2d = UpsamplingBilinear2D, UpsamplingNearest2D
LPPool1d, LPPool2d = LPPool1D, LPPool2D
__all__ += ["Module", "ModuleList", "ModuleDict", "Conv1d", "Conv2d", "Conv3d", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
            "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d",
            "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
            "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
            "CircularPad3d", "UpsamplingBilinear2d", "UpsamplingNearest2d", "LPPool1d", "LPPool2d"]

# paddle.nn.loss is paddle.nn.layer.loss: pycoll.nn.loss also holds the loss classes defined elsewhere
# (extra_losses imports pycoll.nn.loss, so pycoll.nn.loss cannot import them itself)
from pycoll.nn import loss as _loss_module  # noqa: E402
from pycoll.nn.layer import loss as _layer_loss  # noqa: E402
for _name in _layer_loss.__all__:
    if not hasattr(_loss_module, _name):
        setattr(_loss_module, _name, getattr(_layer_loss, _name))
del _name


def __getattr__(name: str) -> Any:
    if name == "SyncBatchNorm":
        from pycoll.parallel.sync_batch_norm import SyncBatchNorm
        return SyncBatchNorm
    if name == "quant":  # paddle.nn.quant, imported on first use
        import pycoll.nn.quant as quant
        return quant
    raise AttributeError(f"module 'pycoll.nn' has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__))
