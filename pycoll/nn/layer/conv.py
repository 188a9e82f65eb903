"""paddle.nn.layer.conv: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.conv import Conv1D, Conv2D, Conv3D
from pycoll.nn.conv_transpose import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose

__all__ = ["Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose"]
