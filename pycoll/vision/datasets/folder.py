"""DatasetFolder and ImageFolder (paddle.vision.datasets): samples read from files under a root
folder, by default those with paddle's image extensions. The default loader also reads ``.npy``
files (with NumPy, so ``extensions=('.npy',)`` makes a folder of arrays a dataset that needs
neither Pillow nor OpenCV)."""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from pycoll.io import Dataset
from pycoll.vision.image import get_image_backend, image_load, require_pillow

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")  # paddle's


def has_valid_extension(filename: str, extensions: Sequence[str]) -> bool:
    """Whether ``filename`` ends with one of ``extensions`` (case-insensitive)."""
    if not isinstance(extensions, (list, tuple)):
        raise TypeError(f"extensions must be a list or tuple, got {type(extensions).__name__}")
    return filename.lower().endswith(tuple(x.lower() for x in extensions))


def default_loader(path: str) -> Any:
    """A ``.npy`` file as its array; an image as an RGB PIL image ('pil' backend) or an RGB HWC
    array ('cv2', OpenCV's decoder)."""
    if path.lower().endswith(".npy"):
        return image_load(path)
    if get_image_backend() == "cv2":
        return image_load(path, "cv2")[..., ::-1].copy()  # OpenCV decodes to BGR
    with open(path, "rb") as f:
        return require_pillow("loading an image file").open(f).convert("RGB")


def _valid_file_test(extensions: Optional[Sequence[str]],
                     is_valid_file: Optional[Callable[[str], bool]]) -> Callable[[str], bool]:
    """``is_valid_file`` when given alone, else the extension test, and both where both are
    given (paddle's documentation says not to pass both; its code then takes the extensions
    alone, dropping the filter the script asked for)."""
    if is_valid_file is not None and extensions is None:
        return is_valid_file
    extensions = IMG_EXTENSIONS if extensions is None else extensions
    has_extension = lambda path: has_valid_extension(path, extensions)  # noqa: E731
    if is_valid_file is None:
        return has_extension
    return lambda path: has_extension(path) and is_valid_file(path)


def _walk(folder: str, valid: Callable[[str], bool]) -> List[str]:
    return [os.path.join(root, name) for root, _, names in sorted(os.walk(folder, followlinks=True))
            for name in sorted(names) if valid(os.path.join(root, name))]


class DatasetFolder(Dataset):
    """Sample i is (loader(path), class index) for the files under ``root/<class>/`` (classes the
    sorted sub-folder names), after ``transform``."""

    def __init__(self, root: str, loader: Optional[Callable[[str], Any]] = None,
                 extensions: Optional[Sequence[str]] = None, transform: Optional[Callable[[Any], Any]] = None,
                 is_valid_file: Optional[Callable[[str], bool]] = None) -> None:
        self.root = root
        self.transform = transform
        valid = _valid_file_test(extensions, is_valid_file)
        self.classes, self.class_to_idx = self._find_classes(root)
        self.samples: List[Tuple[str, int]] = [
            (path, self.class_to_idx[c]) for c in self.classes
            for path in _walk(os.path.join(os.path.expanduser(root), c), valid)]
        if not self.samples:
            raise RuntimeError(f"Found 0 files in subfolders of: {root}\nSupported extensions are: "
                               f"{','.join(extensions or IMG_EXTENSIONS)}")
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions if extensions is not None else (None if is_valid_file else IMG_EXTENSIONS)
        self.targets = [target for _, target in self.samples]

    def _find_classes(self, folder: str) -> Tuple[List[str], Dict[str, int]]:
        if not os.path.isdir(os.path.expanduser(folder)):
            raise FileNotFoundError(f"{type(self).__name__}: root {folder!r} is not a directory")
        classes = sorted(d.name for d in os.scandir(os.path.expanduser(folder)) if d.is_dir())
        return classes, {name: i for i, name in enumerate(classes)}

    def __getitem__(self, index: int) -> Tuple[Any, int]:
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self) -> int:
        return len(self.samples)


class ImageFolder(Dataset):
    """Sample i is [loader(path)] (after ``transform``) for every file under ``root``, unlabelled."""

    def __init__(self, root: str, loader: Optional[Callable[[str], Any]] = None,
                 extensions: Optional[Sequence[str]] = None, transform: Optional[Callable[[Any], Any]] = None,
                 is_valid_file: Optional[Callable[[str], bool]] = None) -> None:
        self.root = root
        if not os.path.isdir(os.path.expanduser(root)):
            raise FileNotFoundError(f"ImageFolder: root {root!r} is not a directory")
        self.samples = _walk(os.path.expanduser(root), _valid_file_test(extensions, is_valid_file))
        if not self.samples:
            raise RuntimeError(f"Found 0 files in subfolders of: {root}\nSupported extensions are: "
                               f"{','.join(extensions or IMG_EXTENSIONS)}")
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions if extensions is not None else (None if is_valid_file else IMG_EXTENSIONS)
        self.transform = transform

    def __getitem__(self, index: int) -> List[Any]:
        sample = self.loader(self.samples[index])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self) -> int:
        return len(self.samples)
