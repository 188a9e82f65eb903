"""paddle's ``text.datasets.Imdb``: movie reviews of the aclImdb archive as word ids, label 0 for
a positive review and 1 for a negative one (paddle's labels)."""
from __future__ import annotations

import collections
import re
import string
import tarfile
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from pycoll.io import Dataset
from pycoll.vision.datasets._files import check_mode, locate

URL = "https://dataset.bj.bcebos.com/imdb%2FaclImdb_v1.tar.gz"
_PUNCTUATION = string.punctuation.encode("latin-1")


def tokenize(data_file: str, pattern: "re.Pattern[str]") -> List[List[bytes]]:
    """The words of every member of the tar file whose name matches ``pattern``, in archive order:
    trailing line breaks and punctuation removed, lower-cased, split on white space (paddle's)."""
    docs = []
    with tarfile.open(data_file) as archive:
        for member in archive:
            if pattern.match(member.name):
                text = archive.extractfile(member).read().rstrip(b"\n\r")
                docs.append(text.translate(None, _PUNCTUATION).lower().split())
    return docs


def _as_bytes(word: Union[bytes, str]) -> bytes:
    return word.encode("latin-1") if isinstance(word, str) else word


def ranked_vocabulary(freq: Dict, cutoff: int) -> Dict:
    """Words seen more than ``cutoff`` times, numbered by falling count then the word, and
    ``'<unk>'`` after them (paddle's dictionaries). The words are bytes, the markers paddle adds
    (``'<s>'``...) str, as in paddle; they are compared as bytes (paddle's sort fails on a tie
    between the two)."""
    kept = sorted(((w, n) for w, n in freq.items() if n > cutoff), key=lambda x: (-x[1], _as_bytes(x[0])))
    vocab = {w: i for i, (w, _) in enumerate(kept)}
    vocab["<unk>"] = len(kept)
    return vocab


class Imdb(Dataset):
    """Sample i is (word ids, [label]). The dictionary (``word_idx``) holds the words of every
    train and test review seen more than ``cutoff`` times, and ``'<unk>'``; the positive reviews
    of ``mode`` come first. ``data_file``: aclImdb_v1.tar.gz, else paddle's cache."""

    def __init__(self, data_file: Optional[str] = None, mode: str = "train", cutoff: int = 150,
                 download: bool = True) -> None:
        self.mode = check_mode(mode, "Imdb")
        self.data_file = locate(data_file, "data_file", "imdb", URL, download, "Imdb")
        self.word_idx = self._build_work_dict(cutoff)
        self._load_anno()

    def _build_work_dict(self, cutoff: int) -> Dict[bytes, int]:
        freq: Dict[bytes, int] = collections.defaultdict(int)
        for doc in tokenize(self.data_file, re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$")):
            for word in doc:
                freq[word] += 1
        return ranked_vocabulary(freq, cutoff)

    def _load_anno(self) -> None:
        unk = self.word_idx["<unk>"]
        self.docs: List[List[int]] = []
        self.labels: List[int] = []
        for label, kind in ((0, "pos"), (1, "neg")):
            for doc in tokenize(self.data_file, re.compile(rf"aclImdb/{self.mode}/{kind}/.*\.txt$")):
                self.docs.append([self.word_idx.get(w, unk) for w in doc])
                self.labels.append(label)

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, np.ndarray]:
        return np.array(self.docs[idx]), np.array([self.labels[idx]])

    def __len__(self) -> int:
        return len(self.docs)
