"""paddle 3.3's padding layers named by mode: ZeroPad1D/3D, ConstantPad1D/2D/3D,
ReflectionPad1D/2D/3D, ReplicationPad1D/2D/3D and CircularPad1D/2D/3D. Each is `pooling._PadNd`
(F.pad over the spatial axes) with its mode fixed; ZeroPad2D lives with the image layers."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from pycoll.nn.pooling import _PadNd
from pycoll.tensor import Tensor

Padding = Union[int, Sequence[int], Tensor]
_FORMATS = {1: "NCL", 2: "NCHW", 3: "NCDHW"}


def _mode_layer(name: str, nd: int, mode: str) -> type:
    """A _PadNd subclass padding `nd` spatial axes in `mode` (fill value 0)."""
    def __init__(self: _PadNd, padding: Padding, data_format: str = _FORMATS[nd], name: Optional[str] = None):
        _PadNd.__init__(self, padding, mode, 0.0, data_format, name)

    doc = f"Pads the {nd} spatial axes of x in mode {mode!r} ({_FORMATS[nd]}, or channel-last)."
    return type(name, (_PadNd,), {"_nd": nd, "__init__": __init__, "__doc__": doc, "__module__": __name__})


ZeroPad1D = _mode_layer("ZeroPad1D", 1, "constant")
ZeroPad3D = _mode_layer("ZeroPad3D", 3, "constant")
ReflectionPad1D = _mode_layer("ReflectionPad1D", 1, "reflect")
ReflectionPad2D = _mode_layer("ReflectionPad2D", 2, "reflect")
ReflectionPad3D = _mode_layer("ReflectionPad3D", 3, "reflect")
ReplicationPad1D = _mode_layer("ReplicationPad1D", 1, "replicate")
ReplicationPad2D = _mode_layer("ReplicationPad2D", 2, "replicate")
ReplicationPad3D = _mode_layer("ReplicationPad3D", 3, "replicate")
CircularPad1D = _mode_layer("CircularPad1D", 1, "circular")
CircularPad2D = _mode_layer("CircularPad2D", 2, "circular")
CircularPad3D = _mode_layer("CircularPad3D", 3, "circular")


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Padding, value: float, data_format: Optional[str] = None, name: Optional[str] = None):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{type(self).__name__}: value must be a number, got {type(value).__name__}")
        super().__init__(padding, "constant", float(value), data_format or _FORMATS[self._nd], name)


class ConstantPad1D(_ConstantPadNd):
    """Pads the last axis of x [N, C, L] ('NCL', or 'NLC') with `value`: padding [left, right]."""


class ConstantPad2D(_ConstantPadNd):
    """Pads H and W of x ('NCHW', or 'NHWC') with `value`: padding [left, right, top, bottom]."""

    _nd = 2


class ConstantPad3D(_ConstantPadNd):
    """Pads D, H and W of x ('NCDHW', or 'NDHWC') with `value`: padding [left, right, top, bottom,
    front, back]."""

    _nd = 3
