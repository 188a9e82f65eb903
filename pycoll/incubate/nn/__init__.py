"""``paddle.incubate.nn``: the fused transformer layers (``functional``, imported with them, holds the fused ops they
are built from), composed of pycoll's differentiable ops."""
from pycoll.incubate.nn.layer.fused_dropout_add import FusedDropoutAdd
from pycoll.incubate.nn.layer.fused_dropout_nd import FusedDropout
from pycoll.incubate.nn.layer.fused_linear import FusedLinear
from pycoll.incubate.nn.layer.fused_multi_transformer import FusedMultiTransformer
from pycoll.incubate.nn.layer.fused_transformer import (FusedBiasDropoutResidualLayerNorm, FusedFeedForward,
                                                        FusedMultiHeadAttention, FusedTransformerEncoderLayer)

__all__ = ["FusedMultiHeadAttention", "FusedFeedForward", "FusedTransformerEncoderLayer", "FusedMultiTransformer",
           "FusedLinear", "FusedBiasDropoutResidualLayerNorm", "FusedDropoutAdd", "FusedDropout"]
