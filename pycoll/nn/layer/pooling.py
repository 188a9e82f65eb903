"""paddle.nn.layer.pooling: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.pooling import (AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D, AdaptiveMaxPool1D,
                               AdaptiveMaxPool2D, AdaptiveMaxPool3D, AvgPool1D, AvgPool2D, AvgPool3D,
                               FractionalMaxPool2D, FractionalMaxPool3D, LPPool1D, LPPool2D, MaxPool1D, MaxPool2D,
                               MaxPool3D, MaxUnPool1D, MaxUnPool2D, MaxUnPool3D)

__all__ = ["AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D", "AdaptiveMaxPool1D", "AdaptiveMaxPool2D",
           "AdaptiveMaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D", "FractionalMaxPool2D", "FractionalMaxPool3D",
           "LPPool1D", "LPPool2D", "MaxPool1D", "MaxPool2D", "MaxPool3D", "MaxUnPool1D", "MaxUnPool2D", "MaxUnPool3D"]
