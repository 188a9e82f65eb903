"""paddle's ``text.datasets.Imikolov``: the Penn Treebank text of Mikolov's simple-examples archive,
as n-grams or as (source, target) sequences of word ids."""
from __future__ import annotations

import collections
import tarfile
from typing import Dict, IO, List, Optional, Tuple

import numpy as np

from pycoll.io import Dataset
from pycoll.text.datasets.imdb import ranked_vocabulary
from pycoll.vision.datasets._files import check_mode, locate

URL = "https://dataset.bj.bcebos.com/imikolov%2Fsimple-examples.tgz"
_MEMBER = "./simple-examples/data/ptb.{}.txt"


def _count_words(lines: IO[bytes], freq: Dict[bytes, int]) -> None:
    for line in lines:
        for word in line.strip().split():
            freq[word] += 1
        freq["<s>"] += 1
        freq["<e>"] += 1


class Imikolov(Dataset):
    """``data_type='NGRAM'``: sample i is an n-gram of ``window_size`` word ids (every n-gram of
    each line wrapped in ``<s>``/``<e>``); ``'SEQ'``: (``<s>`` + line, line + ``<e>``), lines longer
    than ``window_size`` (when positive) left out. The dictionary holds the words of the train and
    valid files seen more than ``min_word_freq`` times, and ``'<unk>'``. ``mode`` 'train' reads
    ptb.train.txt, 'test' ptb.test.txt. ``data_file``: simple-examples.tgz, else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, data_type: str = "NGRAM", window_size: int = -1,
                 mode: str = "train", min_word_freq: int = 50, download: bool = True) -> None:
        if not isinstance(data_type, str) or data_type.upper() not in ("NGRAM", "SEQ"):
            raise ValueError(f"Imikolov: data_type must be 'NGRAM' or 'SEQ', got {data_type!r}")
        self.data_type = data_type.upper()
        if self.data_type == "NGRAM" and window_size < 0:
            raise ValueError(f"Imikolov: data_type 'NGRAM' needs window_size >= 0, got {window_size}")
        self.mode = check_mode(mode, "Imikolov")
        self.window_size = window_size
        self.min_word_freq = min_word_freq
        self.data_file = locate(data_file, "data_file", "imikolov", URL, download, "Imikolov")
        self.word_idx = self._build_work_dict(min_word_freq)
        self._load_anno()

    def _build_work_dict(self, cutoff: int) -> Dict:
        freq: Dict = collections.defaultdict(int)
        with tarfile.open(self.data_file) as archive:
            for split in ("train", "valid"):
                _count_words(archive.extractfile(_MEMBER.format(split)), freq)
        freq.pop("<unk>", None)
        return ranked_vocabulary(freq, cutoff)

    def _load_anno(self) -> None:
        self.data: List[Tuple[List[int], ...]] = []
        unk = self.word_idx["<unk>"]
        with tarfile.open(self.data_file) as archive:
            for line in archive.extractfile(_MEMBER.format(self.mode)):
                ids = [self.word_idx.get(w, unk) for w in line.strip().split()]
                if self.data_type == "NGRAM":
                    ids = [self.word_idx["<s>"], *ids, self.word_idx["<e>"]]
                    n = self.window_size
                    self.data.extend(tuple(ids[i - n:i]) for i in range(n, len(ids) + 1) if len(ids) >= n)
                else:
                    source, target = [self.word_idx["<s>"], *ids], [*ids, self.word_idx["<e>"]]
                    if self.window_size <= 0 or len(source) <= self.window_size:
                        self.data.append((source, target))

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, ...]:
        return tuple(np.array(d) for d in self.data[idx])

    def __len__(self) -> int:
        return len(self.data)
