"""What kind of image a transform was given (a NumPy HW / HWC array, a PIL image, a CHW Tensor)
and the small conversions every functional module shares. Pillow is imported only to answer
for an object that could be a PIL image; it is never required."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from pycoll.tensor import Tensor


def _pil_image_class() -> Optional[type]:
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image.Image


def _is_pil_image(img: Any) -> bool:
    cls = _pil_image_class()
    return cls is not None and isinstance(img, cls)


def _is_numpy_image(img: Any) -> bool:
    return isinstance(img, np.ndarray) and img.ndim in (2, 3)


def _is_tensor_image(img: Any) -> bool:
    return isinstance(img, Tensor)


def _check_image(img: Any, fn: str) -> None:
    if not (_is_numpy_image(img) or _is_pil_image(img) or _is_tensor_image(img)):
        raise TypeError(f"{fn}: img must be a numpy array of 2 or 3 dims (HW / HWC), a PIL image or a "
                        f"Tensor (CHW), got {type(img).__name__}"
                        + (f" of {img.ndim} dims" if isinstance(img, np.ndarray) else ""))


def _to_pil(arr: np.ndarray) -> Any:
    """An array worked on for a PIL image, back as a PIL image."""
    from PIL import Image
    return Image.fromarray(np.ascontiguousarray(arr))


def get_image_size(img: Any) -> Tuple[int, int]:
    """(width, height) of an array (HW[C]), PIL image or Tensor (CHW / NCHW) image."""
    if _is_pil_image(img):
        return img.size
    if _is_numpy_image(img):
        return img.shape[1], img.shape[0]
    if _is_tensor_image(img) and img.ndim in (3, 4):
        return img.shape[-1], img.shape[-2]
    raise TypeError(f"img must be a numpy array (HW / HWC), a PIL image or a 3-D / 4-D Tensor, got "
                    f"{type(img).__name__}")
