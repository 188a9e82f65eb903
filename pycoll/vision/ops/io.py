"""paddle.vision.ops.read_file and decode_jpeg.

paddle 3.3.1 decodes JPEGs on the GPU only (nvjpeg; its CPU kernel raises). pycoll decodes with
Pillow wherever it is installed, on the host, and puts the image where the encoded bytes were
(NumPy or CuPy); without Pillow decode_jpeg raises an ImportError saying so."""
from __future__ import annotations

import io as _io
import os
from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.tensor import Tensor, wrap

__all__ = ["decode_jpeg", "read_file"]

_MODES = {"unchanged": None, "gray": "L", "rgb": "RGB"}


def read_file(filename: str, name: Optional[str] = None) -> Tensor:
    """The bytes of the file, as a 1-D uint8 tensor (on the host, as paddle's)."""
    if not isinstance(filename, (str, os.PathLike)):
        raise TypeError(f"read_file: filename must be a path string, got {type(filename).__name__}")
    with open(filename, "rb") as f:
        return wrap(np.frombuffer(f.read(), dtype=np.uint8).copy())


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError("decode_jpeg needs Pillow (pip install pillow) to decode JPEGs") from exc
    return Image


def decode_jpeg(x: Tensor, mode: str = "unchanged", name: Optional[str] = None) -> Tensor:
    """The JPEG whose bytes x (1-D uint8, as read_file gives) holds, decoded to uint8 [C, H, W]:
    ``mode`` 'unchanged' keeps the file's channels (1 for grayscale, 3 for colour), 'gray' gives
    1 channel, 'rgb' 3."""
    if mode not in _MODES:
        raise ValueError(f"decode_jpeg: mode must be one of {list(_MODES)}, got {mode!r}")
    data = as_tensor(x)
    if data.ndim != 1 or data.dtype != np.uint8:
        raise ValueError(f"decode_jpeg: x must be a 1-D uint8 tensor of the file's bytes, got shape {data.shape} "
                         f"dtype {data.dtype}")
    image = _pillow().open(_io.BytesIO(data.numpy().tobytes()))
    if image.format != "JPEG":
        raise ValueError(f"decode_jpeg: x does not hold a JPEG (Pillow reads {image.format!r})")
    target = _MODES[mode] or ("L" if image.mode in ("L", "1") else "RGB")
    pixels = np.asarray(image.convert(target))
    pixels = pixels[None] if pixels.ndim == 2 else pixels.transpose(2, 0, 1)
    return wrap(array_module(data._array).asarray(np.ascontiguousarray(pixels)))
