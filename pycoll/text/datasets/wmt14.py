"""paddle's ``text.datasets.WMT14``: French-to-English sentence pairs of paddle's wmt14.tgz (its
dictionaries ``*src.dict`` / ``*trg.dict`` and the ``<mode>/<mode>`` files of tab-separated pairs)."""
from __future__ import annotations

import tarfile
from typing import Dict, IO, List, Optional, Tuple

import numpy as np

from pycoll.io import Dataset
from pycoll.vision.datasets._files import locate

URL_TRAIN = "http://paddlemodels.bj.bcebos.com/wmt/wmt14.tgz"
START, END, UNK = "<s>", "<e>", "<unk>"
UNK_IDX = 2
MAX_LENGTH = 80  # pairs with a longer side are left out, as paddle's


def check_split(mode: str, allowed: Tuple[str, ...], cls: str) -> str:
    if not isinstance(mode, str) or mode.lower() not in allowed:
        raise ValueError(f"{cls}: mode must be one of {list(allowed)}, got {mode!r}")
    return mode.lower()


def check_size(value: int, name: str, cls: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{cls}: {name} must be a positive int, got {value!r}")
    return value


def sentence_pairs(lines: IO[bytes]) -> List[Tuple[List[str], List[str]]]:
    """The (first, second) word lists of the lines holding exactly two tab-separated fields."""
    pairs = []
    for line in lines:
        fields = line.decode().strip().split("\t")
        if len(fields) == 2:
            pairs.append((fields[0].split(), fields[1].split()))
    return pairs


def _first_lines(lines: IO[bytes], size: int) -> Dict[str, int]:
    words: Dict[str, int] = {}
    for i, line in enumerate(lines):
        if i >= size:
            break
        words[line.strip().decode()] = i
    return words


class WMT14(Dataset):
    """Sample i is (source ids wrapped in ``<s>``/``<e>``, ``<s>`` + target ids, target ids + ``<e>``),
    the dictionaries being the first ``dict_size`` lines of the archive's; unknown words are 2.
    ``mode``: 'train', 'test' or 'gen'. ``data_file``: wmt14.tgz, else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, mode: str = "train", dict_size: int = -1,
                 download: bool = True) -> None:
        self.mode = check_split(mode, ("train", "test", "gen"), "WMT14")
        self.data_file = locate(data_file, "data_file", "wmt14", URL_TRAIN, download, "WMT14")
        self.dict_size = check_size(dict_size, "dict_size", "WMT14")
        self._load_data()

    def _load_data(self) -> None:
        self.src_ids: List[List[int]] = []
        self.trg_ids: List[List[int]] = []
        self.trg_ids_next: List[List[int]] = []
        with tarfile.open(self.data_file) as archive:
            def member(suffix: str) -> List[str]:
                return [m.name for m in archive if m.name.endswith(suffix)]

            for suffix in ("src.dict", "trg.dict"):
                if len(member(suffix)) != 1:
                    raise ValueError(f"WMT14: {self.data_file} must hold one file named *{suffix}, "
                                     f"got {member(suffix)}")
            self.src_dict = _first_lines(archive.extractfile(member("src.dict")[0]), self.dict_size)
            self.trg_dict = _first_lines(archive.extractfile(member("trg.dict")[0]), self.dict_size)
            for name in member(f"{self.mode}/{self.mode}"):
                for source, target in sentence_pairs(archive.extractfile(name)):
                    src = [self.src_dict.get(w, UNK_IDX) for w in [START, *source, END]]
                    trg = [self.trg_dict.get(w, UNK_IDX) for w in target]
                    if len(src) > MAX_LENGTH or len(trg) > MAX_LENGTH:
                        continue
                    self.src_ids.append(src)
                    self.trg_ids.append([self.trg_dict[START], *trg])
                    self.trg_ids_next.append([*trg, self.trg_dict[END]])

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array(self.src_ids[idx]), np.array(self.trg_ids[idx]), np.array(self.trg_ids_next[idx])

    def __len__(self) -> int:
        return len(self.src_ids)

    def get_dict(self, reverse: bool = False) -> Tuple[Dict, Dict]:
        """(source, target) dictionaries, word -> id (id -> word with ``reverse``)."""
        if reverse:
            return {i: w for w, i in self.src_dict.items()}, {i: w for w, i in self.trg_dict.items()}
        return self.src_dict, self.trg_dict
