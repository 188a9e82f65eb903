"""MNIST and FashionMNIST (paddle.vision.datasets) from the standard gzipped idx files."""
from __future__ import annotations

import gzip
from typing import Any, Callable, Optional, Tuple

import numpy as np

import pycoll
from pycoll.io import Dataset
from pycoll.vision.datasets._files import check_backend, check_mode, locate
from pycoll.vision.image import require_pillow

_IMAGES_MAGIC, _LABELS_MAGIC = 2051, 2049


def _read_idx(path: str, magic: int, header_ints: int) -> Tuple[Tuple[int, ...], np.ndarray]:
    """The big-endian int32 header (after the magic number) and the uint8 payload of an idx file."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    header = np.frombuffer(data, ">i4", count=header_ints)
    if header[0] != magic:
        raise ValueError(f"{path} is not an idx file of this kind: magic number {header[0]}, expected {magic}")
    return tuple(int(v) for v in header[1:]), np.frombuffer(data, np.uint8, offset=4 * header_ints)


class MNIST(Dataset):
    """Sample i is (image, label): the image a 28x28 PIL image ('pil' backend) or float32 array
    ('cv2'), after ``transform``; the label an int64 array of shape [1]. Files: ``image_path`` /
    ``label_path``, else paddle's cache (~/.cache/paddle/dataset/mnist/<mode's files>)."""

    NAME = "mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/mnist/"
    TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
    TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
    TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
    TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"

    def __init__(self, image_path: Optional[str] = None, label_path: Optional[str] = None, mode: str = "train",
                 transform: Optional[Callable[[Any], Any]] = None, download: bool = True,
                 backend: Optional[str] = None) -> None:
        cls = type(self).__name__
        self.mode = check_mode(mode, cls)
        self.backend = check_backend(backend, cls)
        train = self.mode == "train"
        self.image_path = locate(image_path, "image_path", self.NAME,
                                 self.TRAIN_IMAGE_URL if train else self.TEST_IMAGE_URL, download, cls)
        self.label_path = locate(label_path, "label_path", self.NAME,
                                 self.TRAIN_LABEL_URL if train else self.TEST_LABEL_URL, download, cls)
        self.transform = transform
        self._parse_dataset()
        self.dtype = pycoll.get_default_dtype()

    def _parse_dataset(self) -> None:
        (count, rows, cols), pixels = _read_idx(self.image_path, _IMAGES_MAGIC, 4)
        (num_labels,), labels = _read_idx(self.label_path, _LABELS_MAGIC, 2)
        if num_labels != count or pixels.size < count * rows * cols or labels.size < count:
            raise ValueError(f"{type(self).__name__}: {self.image_path} holds {count} images of {rows}x{cols} and "
                             f"{self.label_path} {num_labels} labels; they must agree and be complete")
        self._shape = (rows, cols)
        self.images = pixels[:count * rows * cols].reshape(count, rows * cols).astype(np.float32)
        self.labels = labels[:count].astype(np.int64).reshape(count, 1)

    def __getitem__(self, idx: int) -> Tuple[Any, np.ndarray]:
        image, label = self.images[idx].reshape(self._shape), self.labels[idx]
        if self.backend == "pil":
            image = require_pillow(f"{type(self).__name__} with backend='pil'").fromarray(image.astype(np.uint8))
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label.astype(np.int64)
        return image.astype(self.dtype), label.astype(np.int64)

    def __len__(self) -> int:
        return len(self.labels)


class FashionMNIST(MNIST):
    """Fashion-MNIST: MNIST's format and interface; cache folder fashion-mnist."""

    NAME = "fashion-mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/fashion_mnist/"
    TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
    TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
    TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
    TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
