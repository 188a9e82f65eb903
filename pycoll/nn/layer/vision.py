"""paddle.nn.layer.vision: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.image_layers import ChannelShuffle
from pycoll.nn.resample import PixelShuffle, PixelUnshuffle

__all__ = ["ChannelShuffle", "PixelShuffle", "PixelUnshuffle"]
