"""paddle's ``text.datasets.WMT16``: English-German sentence pairs of paddle's wmt16.tar.gz
(``wmt16/train``, ``wmt16/test``, ``wmt16/val``: tab-separated English and German)."""
from __future__ import annotations

import collections
import tarfile
from typing import Dict, List, Optional, Tuple

import numpy as np

from pycoll.io import Dataset
from pycoll.text.datasets.wmt14 import check_size, check_split, sentence_pairs
from pycoll.vision.datasets._files import locate

DATA_URL = "http://paddlemodels.bj.bcebos.com/wmt/wmt16.tar.gz"
TOTAL_EN_WORDS, TOTAL_DE_WORDS = 11250, 19220
START_MARK, END_MARK, UNK_MARK = "<s>", "<e>", "<unk>"


class WMT16(Dataset):
    """Sample i is (source ids wrapped in ``<s>``/``<e>``, ``<s>`` + target ids, target ids + ``<e>``),
    the source being language ``lang`` ('en' or 'de') and the target the other. Each dictionary
    is ``<s>``, ``<e>``, ``<unk>`` and then that language's words of ``wmt16/train`` by falling count
    (first seen first on a tie), ``src_dict_size`` / ``trg_dict_size`` entries in all. Differences
    from paddle 3.3.1: it builds both dictionaries from the source language's words (so its target
    ids are mostly ``<unk>``) and caches them in its download folder; pycoll builds each from its
    own language, in memory. ``data_file``: wmt16.tar.gz, else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, mode: str = "train", src_dict_size: int = -1,
                 trg_dict_size: int = -1, lang: str = "en", download: bool = True) -> None:
        self.mode = check_split(mode, ("train", "test", "val"), "WMT16")
        if lang not in ("en", "de"):
            raise ValueError(f"WMT16: lang must be 'en' or 'de', got {lang!r}")
        self.lang = lang
        self.data_file = locate(data_file, "data_file", "wmt16", DATA_URL, download, "WMT16")
        check_size(src_dict_size, "src_dict_size", "WMT16")
        check_size(trg_dict_size, "trg_dict_size", "WMT16")
        self.src_dict_size = min(src_dict_size, TOTAL_EN_WORDS if lang == "en" else TOTAL_DE_WORDS)
        self.trg_dict_size = min(trg_dict_size, TOTAL_DE_WORDS if lang == "en" else TOTAL_EN_WORDS)
        with tarfile.open(self.data_file) as archive:
            train = sentence_pairs(archive.extractfile("wmt16/train"))
            pairs = train if self.mode == "train" else sentence_pairs(archive.extractfile(f"wmt16/{self.mode}"))
        source = 0 if lang == "en" else 1
        self.src_dict = self._build_dict(train, source, src_dict_size)
        self.trg_dict = self._build_dict(train, 1 - source, trg_dict_size)
        self._load_data(pairs, source)

    @staticmethod
    def _build_dict(pairs: List[Tuple[List[str], List[str]]], column: int, size: int) -> Dict[str, int]:
        counts: Dict[str, int] = collections.defaultdict(int)
        for pair in pairs:
            for word in pair[column]:
                counts[word] += 1
        ranked = [START_MARK, END_MARK, UNK_MARK] + sorted(counts, key=counts.__getitem__, reverse=True)
        return {w: i for i, w in enumerate(ranked[:max(size, 3)])}

    def _load_data(self, pairs: List[Tuple[List[str], List[str]]], source: int) -> None:
        start, end, unk = (self.src_dict[m] for m in (START_MARK, END_MARK, UNK_MARK))
        self.src_ids: List[List[int]] = []
        self.trg_ids: List[List[int]] = []
        self.trg_ids_next: List[List[int]] = []
        for pair in pairs:
            trg = [self.trg_dict.get(w, unk) for w in pair[1 - source]]
            self.src_ids.append([start, *[self.src_dict.get(w, unk) for w in pair[source]], end])
            self.trg_ids.append([start, *trg])
            self.trg_ids_next.append([*trg, end])

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array(self.src_ids[idx]), np.array(self.trg_ids[idx]), np.array(self.trg_ids_next[idx])

    def __len__(self) -> int:
        return len(self.src_ids)

    def get_dict(self, lang: str, reverse: bool = False) -> Dict:
        """The dictionary of ``lang`` ('en' or 'de'), word -> id (id -> word with ``reverse``)."""
        if lang not in ("en", "de"):
            raise ValueError(f"WMT16.get_dict: lang must be 'en' or 'de', got {lang!r}")
        words = self.src_dict if lang == self.lang else self.trg_dict
        return {i: w for w, i in words.items()} if reverse else words
