"""paddle.nn.layer.common: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.bilinear import Bilinear
from pycoll.nn.common import Dropout, Dropout2D, Embedding, Flatten, Identity, Linear, Unflatten
from pycoll.nn.distance import CosineSimilarity
from pycoll.nn.image_layers import Fold, Unfold, ZeroPad2D
from pycoll.nn.noise_layers import AlphaDropout, Dropout3D, FeatureAlphaDropout
from pycoll.nn.pad_layers import (CircularPad1D, CircularPad2D, CircularPad3D, ConstantPad1D, ConstantPad2D,
                                  ConstantPad3D, ReflectionPad1D, ReflectionPad2D, ReflectionPad3D, ReplicationPad1D,
                                  ReplicationPad2D, ReplicationPad3D, ZeroPad1D, ZeroPad3D)
from pycoll.nn.pooling import Pad1D, Pad2D, Pad3D
from pycoll.nn.resample import Upsample, UpsamplingBilinear2D, UpsamplingNearest2D

__all__ = ["AlphaDropout", "Bilinear", "CircularPad1D", "CircularPad2D", "CircularPad3D", "ConstantPad1D", "ConstantPad2D",
           "ConstantPad3D", "CosineSimilarity", "Dropout", "Dropout2D", "Dropout3D", "Embedding",
           "FeatureAlphaDropout", "Flatten", "Fold", "Identity", "Linear", "Pad1D", "Pad2D", "Pad3D",
           "ReflectionPad1D", "ReflectionPad2D", "ReflectionPad3D", "ReplicationPad1D", "ReplicationPad2D",
           "ReplicationPad3D", "Unflatten", "Unfold", "Upsample", "UpsamplingBilinear2D", "UpsamplingNearest2D",
           "ZeroPad1D", "ZeroPad2D", "ZeroPad3D"]
