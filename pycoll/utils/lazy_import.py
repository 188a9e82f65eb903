"""``pycoll.utils.try_import``: import an optional dependency, or say how to install it."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

_PIP_NAMES = {"cv2": "opencv-python"}  # modules whose pip package has another name (paddle's list)


def try_import(module_name: str, err_msg: Optional[str] = None) -> ModuleType:
    """The module ``module_name``; if it cannot be imported, ImportError with ``err_msg`` or
    paddle's message naming the package to ``pip install``."""
    if not isinstance(module_name, str):
        raise TypeError(f"try_import: module_name must be a str, got {type(module_name).__name__}")
    try:
        return importlib.import_module(module_name)
    except ImportError:
        if err_msg is None:
            package = _PIP_NAMES.get(module_name, module_name.split(".")[0])
            err_msg = (f"Failed importing {module_name}. This likely means that some pycoll modules require additional "
                       f"dependencies that have to be manually installed (usually with `pip install {package}`). ")
        raise ImportError(err_msg) from None
