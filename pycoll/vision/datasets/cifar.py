"""Cifar10 and Cifar100 (paddle.vision.datasets) from the python-version tar.gz archives. The
batches in the archive are pickles: open only archives you trust (as with paddle)."""
from __future__ import annotations

import pickle
import tarfile
from typing import Any, Callable, Optional, Tuple

import numpy as np

import pycoll
from pycoll.io import Dataset
from pycoll.vision.datasets._files import check_backend, check_mode, locate
from pycoll.vision.image import require_pillow

_URL_PREFIX = "https://dataset.bj.bcebos.com/cifar/"


class Cifar10(Dataset):
    """Sample i is (image, label): a 32x32 RGB PIL image ('pil') or a float32 [32, 32, 3] array
    ('cv2'), after ``transform``, and an int64 scalar array. ``data_file`` is the archive, else
    paddle's cache (~/.cache/paddle/dataset/cifar/cifar-10-python.tar.gz)."""

    _URL = _URL_PREFIX + "cifar-10-python.tar.gz"
    _FLAGS = {"train": "data_batch", "test": "test_batch"}  # archive members of each mode

    def __init__(self, data_file: Optional[str] = None, mode: str = "train",
                 transform: Optional[Callable[[Any], Any]] = None, download: bool = True,
                 backend: Optional[str] = None) -> None:
        cls = type(self).__name__
        self.mode = check_mode(mode, cls)
        self.backend = check_backend(backend, cls)
        self.flag = self._FLAGS[self.mode]
        self.data_file = locate(data_file, "data_file", "cifar", self._URL, download, cls)
        self.transform = transform
        self._load_data()
        self.dtype = pycoll.get_default_dtype()

    def _load_data(self) -> None:
        self.data = []
        with tarfile.open(self.data_file, mode="r") as archive:
            for name in sorted(m.name for m in archive if self.flag in m.name):
                batch = pickle.load(archive.extractfile(name), encoding="bytes")
                labels = batch.get(b"labels", batch.get(b"fine_labels"))
                if labels is None:
                    raise ValueError(f"{type(self).__name__}: {name} in {self.data_file} has no labels")
                self.data.extend(zip(batch[b"data"], labels))

    def __getitem__(self, idx: int) -> Tuple[Any, np.ndarray]:
        image, label = self.data[idx]
        image = np.reshape(image, [3, 32, 32]).transpose([1, 2, 0])
        if self.backend == "pil":
            image = require_pillow(f"{type(self).__name__} with backend='pil'").fromarray(image.astype(np.uint8))
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, np.array(label).astype(np.int64)
        return image.astype(self.dtype), np.array(label).astype(np.int64)

    def __len__(self) -> int:
        return len(self.data)


class Cifar100(Cifar10):
    """CIFAR-100 (fine labels); archive cifar-100-python.tar.gz."""

    _URL = _URL_PREFIX + "cifar-100-python.tar.gz"
    _FLAGS = {"train": "train", "test": "test"}
