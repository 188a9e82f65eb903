"""The image backend (paddle.vision.set_image_backend / get_image_backend / image_load): what the
datasets hand out. 'pil' gives PIL images (needs Pillow), 'cv2' NumPy arrays. paddle's default is
'pil'; pycoll's is 'pil' where Pillow is installed and 'cv2' (arrays) where it is not, as pycoll
never requires Pillow."""
from __future__ import annotations

import importlib.util
from typing import Any, Optional

import numpy as np

_BACKENDS = ("pil", "cv2", "tensor")
_pillow_installed = importlib.util.find_spec("PIL") is not None
_backend = "pil" if _pillow_installed else "cv2"


def set_image_backend(backend: str) -> None:
    """Sets the backend the datasets and ``image_load`` use: 'pil', 'cv2' or 'tensor'."""
    global _backend
    if backend not in _BACKENDS:
        raise ValueError(f"Expected backend are one of {list(_BACKENDS)}, but got {backend!r}")
    _backend = backend


def get_image_backend() -> str:
    """The backend set by ``set_image_backend`` ('pil' by default where Pillow is installed, else 'cv2')."""
    return _backend


def require_pillow(what: str) -> Any:
    """PIL.Image, or an ImportError saying that ``what`` needs Pillow and how to do without it."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError(f"{what} needs Pillow (pip install pillow); without it use backend='cv2', "
                          f"which works on NumPy arrays") from exc
    return Image


def image_load(path: str, backend: Optional[str] = None) -> Any:
    """The image at ``path``: a ``.npy`` file as its array whatever the backend; otherwise a PIL
    image ('pil') or an HWC array in OpenCV's BGR order ('cv2', needs opencv-python)."""
    backend = _backend if backend is None else backend
    if backend not in _BACKENDS:
        raise ValueError(f"Expected backend are one of {list(_BACKENDS)}, but got {backend!r}")
    if str(path).lower().endswith(".npy"):
        return np.load(path, allow_pickle=False)
    if backend == "pil":
        return require_pillow("image_load with backend='pil'").open(path)
    if backend == "cv2":
        try:
            import cv2
        except ImportError as exc:
            chosen = "" if _pillow_installed else ", the default here because Pillow is not installed"
            raise ImportError(f"image_load: reading the image file {path} needs Pillow (pip install pillow: the "
                              f"'pil' backend, paddle's default) or opencv-python (the 'cv2' backend{chosen}); "
                              f".npy files load without either") from exc
        return cv2.imread(path)
    raise ValueError("image_load: backend 'tensor' (paddle's JPEG decoder) is not available in pycoll; "
                     "use 'pil' or 'cv2'")
