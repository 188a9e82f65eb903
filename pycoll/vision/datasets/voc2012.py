"""paddle's ``vision.datasets.VOC2012``: the segmentation images and class maps of Pascal VOC 2012,
read from the VOCtrainval tar archive."""
from __future__ import annotations

import io
import tarfile
from typing import Any, Callable, Optional, Tuple

import numpy as np

import pycoll
from pycoll.io import Dataset
from pycoll.vision.datasets._files import check_backend, locate
from pycoll.vision.datasets.flowers import check_split
from pycoll.vision.image import require_pillow

VOC_URL = "https://dataset.bj.bcebos.com/voc/VOCtrainval_11-May-2012.tar"
SET_FILE = "VOCdevkit/VOC2012/ImageSets/Segmentation/{}.txt"
DATA_FILE = "VOCdevkit/VOC2012/JPEGImages/{}.jpg"
LABEL_FILE = "VOCdevkit/VOC2012/SegmentationClass/{}.png"
MODE_FLAG_MAP = {"train": "trainval", "test": "train", "valid": "val"}  # paddle's


class VOC2012(Dataset):
    """Sample i is (image, label map): PIL images ('pil') or float arrays ('cv2'; the image's RGB
    pixels, the map's class indices), ``transform`` applied to the image. The names of a mode are
    the lines of ImageSets/Segmentation/<flag>.txt ('train': trainval, 'test': train, 'valid':
    val, as paddle's). ``data_file``: the tar archive, else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, mode: str = "train",
                 transform: Optional[Callable[[Any], Any]] = None, download: bool = True,
                 backend: Optional[str] = None) -> None:
        self.mode = check_split(mode, "VOC2012")
        self.backend = check_backend(backend, "VOC2012")
        self.flag = MODE_FLAG_MAP[self.mode]
        self.data_file = locate(data_file, "data_file", "voc2012", VOC_URL, download, "VOC2012")
        self.transform = transform
        self._load_anno()
        self.dtype = pycoll.get_default_dtype()

    def _load_anno(self) -> None:
        with tarfile.open(self.data_file) as archive:
            self.name2mem = {m.name: m for m in archive.getmembers()}
            names = [line.strip().decode("utf-8") for line in
                     archive.extractfile(self.name2mem[SET_FILE.format(self.flag)]) if line.strip()]
        self.data = [DATA_FILE.format(n) for n in names]
        self.labels = [LABEL_FILE.format(n) for n in names]

    def _read(self, name: str) -> Any:
        with tarfile.open(self.data_file) as archive:
            return require_pillow("VOC2012").open(io.BytesIO(archive.extractfile(self.name2mem[name]).read()))

    def __getitem__(self, idx: int) -> Tuple[Any, Any]:
        data, label = self._read(self.data[idx]), self._read(self.labels[idx])
        if self.backend == "cv2":
            data, label = np.array(data), np.array(label)
        if self.transform is not None:
            data = self.transform(data)
        if self.backend == "cv2":
            return data.astype(self.dtype), label.astype(self.dtype)
        return data, label

    def __len__(self) -> int:
        return len(self.data)
