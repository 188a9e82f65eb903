"""paddle's ``text.datasets.UCIHousing``: the Boston housing table (13 features and the price per row)."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

import pycoll
from pycoll.io import Dataset
from pycoll.vision.datasets._files import check_mode, locate

URL = "http://paddlemodels.bj.bcebos.com/uci_housing/housing.data"
FEATURE_NUM = 14  # 13 features and the price


class UCIHousing(Dataset):
    """Sample i is (features [13], price [1]) in the default dtype. The features are centred on
    their mean over the whole file and divided by their range; the first 80% of the rows are
    'train', the rest 'test' (paddle's split). ``data_file``: housing.data (numbers separated by
    white space), else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, mode: str = "train", download: bool = True) -> None:
        self.mode = check_mode(mode, "UCIHousing")
        self.data_file = locate(data_file, "data_file", "uci_housing", URL, download, "UCIHousing")
        self._load_data()
        self.dtype = pycoll.get_default_dtype()

    def _load_data(self, feature_num: int = FEATURE_NUM, ratio: float = 0.8) -> None:
        data = np.fromfile(self.data_file, sep=" ")
        if data.size == 0 or data.size % feature_num:
            raise ValueError(f"UCIHousing: {self.data_file} must hold rows of {feature_num} numbers, "
                             f"got {data.size} numbers")
        data = data.reshape(-1, feature_num)
        spread = data.max(axis=0) - data.min(axis=0)
        data[:, :-1] = (data[:, :-1] - data.sum(axis=0)[:-1] / len(data)) / spread[:-1]
        offset = int(len(data) * ratio)
        self.data = data[:offset] if self.mode == "train" else data[offset:]

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, np.ndarray]:
        row = self.data[idx]
        return row[:-1].astype(self.dtype), row[-1:].astype(self.dtype)

    def __len__(self) -> int:
        return len(self.data)
