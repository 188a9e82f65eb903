"""paddle's ``vision.datasets.Flowers``: Oxford 102 Flowers from 102flowers.tgz, imagelabels.mat and
setid.mat. The images of the mode asked for are read from the archive into memory when the dataset
is built (paddle extracts the archive next to the file instead)."""
from __future__ import annotations

import io
import tarfile
from typing import Any, Callable, Optional, Tuple

import numpy as np

import pycoll
from pycoll.io import Dataset
from pycoll.utils import try_import
from pycoll.vision.datasets._files import check_backend, locate
from pycoll.vision.image import require_pillow

DATA_URL = "http://paddlemodels.bj.bcebos.com/flowers/102flowers.tgz"
LABEL_URL = "http://paddlemodels.bj.bcebos.com/flowers/imagelabels.mat"
SETID_URL = "http://paddlemodels.bj.bcebos.com/flowers/setid.mat"
MODE_FLAG_MAP = {"train": "tstid", "test": "trnid", "valid": "valid"}  # paddle's: the larger split trains


def check_split(mode: str, cls: str) -> str:
    if not isinstance(mode, str) or mode.lower() not in ("train", "valid", "test"):
        raise ValueError(f"{cls}: mode must be 'train', 'valid' or 'test', got {mode!r}")
    return mode.lower()


class Flowers(Dataset):
    """Sample i is (image, label): a PIL image ('pil') or a float array of its RGB pixels ('cv2'),
    after ``transform``, and an int64 array [1] (labels 1 to 102). The images of a mode are those
    setid.mat lists under its flag ('train': tstid, 'test': trnid, 'valid': valid, as paddle's).
    Files: ``data_file``, ``label_file``, ``setid_file``, else paddle's cache; reading the .mat
    files needs SciPy."""

    def __init__(self, data_file: Optional[str] = None, label_file: Optional[str] = None,
                 setid_file: Optional[str] = None, mode: str = "train",
                 transform: Optional[Callable[[Any], Any]] = None, download: bool = True,
                 backend: Optional[str] = None) -> None:
        self.mode = check_split(mode, "Flowers")
        self.backend = check_backend(backend, "Flowers")
        self.data_file = locate(data_file, "data_file", "flowers", DATA_URL, download, "Flowers")
        label_file = locate(label_file, "label_file", "flowers", LABEL_URL, download, "Flowers")
        setid_file = locate(setid_file, "setid_file", "flowers", SETID_URL, download, "Flowers")
        self.transform = transform
        scio = try_import("scipy.io")
        self.labels = scio.loadmat(label_file)["labels"][0]
        self.indexes = scio.loadmat(setid_file)[MODE_FLAG_MAP[self.mode]][0]
        wanted = {f"jpg/image_{int(i):05}.jpg" for i in self.indexes}
        with tarfile.open(self.data_file) as archive:  # a .tgz has no random access: read this mode's once
            self._members = {m.name: archive.extractfile(m).read() for m in archive if m.name in wanted}

    def __getitem__(self, idx: int) -> Tuple[Any, np.ndarray]:
        index = int(self.indexes[idx])
        label = np.array([self.labels[index - 1]]).astype(np.int64)
        image = require_pillow("Flowers").open(io.BytesIO(self._members[f"jpg/image_{index:05}.jpg"]))
        if self.backend == "cv2":
            image = np.array(image)
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return image.astype(pycoll.get_default_dtype()), label

    def __len__(self) -> int:
        return len(self.indexes)
