"""paddle's ``text.datasets.Conll05st``: semantic role labelling on the CoNLL-2005 test.wsj set."""
from __future__ import annotations

import gzip
import tarfile
from typing import Dict, List, Optional, Tuple

import numpy as np

from pycoll.io import Dataset
from pycoll.vision.datasets._files import locate

DATA_URL = "http://paddlemodels.bj.bcebos.com/conll05st/conll05st-tests.tar.gz"
WORDDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FwordDict.txt"
VERBDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FverbDict.txt"
TRGDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FtargetDict.txt"
EMB_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2Femb"
UNK_IDX = 0
_WORDS = "conll05st-release/test.wsj/words/test.wsj.words.gz"
_PROPS = "conll05st-release/test.wsj/props/test.wsj.props.gz"


def bio_tags(column: List[str]) -> List[str]:
    """One predicate's bracketed argument column ('(A0*', '*', '*)', '(V*)') as B-/I-/O tags."""
    tags, tag, inside = [], "O", False
    for token in column:
        if token == "*":
            tags.append(f"I-{tag}" if inside else "O")
        elif token == "*)":
            tags.append(f"I-{tag}")
            inside = False
        elif token.startswith("("):
            tag = token[1:token.find("*")]
            tags.append(f"B-{tag}")
            inside = ")" not in token
        else:
            raise RuntimeError(f"Conll05st: unexpected label {token!r}")
    return tags


class Conll05st(Dataset):
    """Sample i is 9 int arrays of the sentence's length, for one (sentence, predicate): word ids,
    the ids of the words 2 and 1 before the predicate, of the predicate, and 1 and 2 after it
    ('bos'/'eos' past the ends), the predicate's id, the mark of those 5 positions, and the BIO
    label ids. Files: ``data_file`` (conll05st-tests.tar.gz), ``word_dict_file``, ``verb_dict_file``,
    ``target_dict_file`` (one entry a line) and ``emb_file`` (only its path is kept), else
    paddle's cache. Label ids number the argument types in sorted order (paddle's follow a set's
    order, which changes from run to run), B- then I- of each, then 'O'."""

    def __init__(self, data_file: Optional[str] = None, word_dict_file: Optional[str] = None,
                 verb_dict_file: Optional[str] = None, target_dict_file: Optional[str] = None,
                 emb_file: Optional[str] = None, download: bool = True) -> None:
        where = lambda path, arg, url: locate(path, arg, "conll05st", url, download, "Conll05st")  # noqa: E731
        self.data_file = where(data_file, "data_file", DATA_URL)
        self.word_dict_file = where(word_dict_file, "word_dict_file", WORDDICT_URL)
        self.verb_dict_file = where(verb_dict_file, "verb_dict_file", VERBDICT_URL)
        self.target_dict_file = where(target_dict_file, "target_dict_file", TRGDICT_URL)
        self.emb_file = where(emb_file, "emb_file", EMB_URL)
        self.word_dict = self._load_dict(self.word_dict_file)
        self.predicate_dict = self._load_dict(self.verb_dict_file)
        self.label_dict = self._load_label_dict(self.target_dict_file)
        self._load_anno()

    @staticmethod
    def _load_dict(filename: str) -> Dict[str, int]:
        with open(filename) as f:
            return {line.strip(): i for i, line in enumerate(f)}

    @staticmethod
    def _load_label_dict(filename: str) -> Dict[str, int]:
        with open(filename) as f:
            kinds = sorted({line.strip()[2:] for line in f if line.strip()[:2] in ("B-", "I-")})
        labels = {}
        for kind in kinds:
            labels[f"B-{kind}"] = len(labels)
            labels[f"I-{kind}"] = len(labels)
        labels["O"] = len(labels)
        return labels

    def _load_anno(self) -> None:
        self.sentences: List[List[str]] = []
        self.predicates: List[str] = []
        self.labels: List[List[str]] = []
        with tarfile.open(self.data_file) as archive, \
                gzip.GzipFile(fileobj=archive.extractfile(_WORDS)) as words, \
                gzip.GzipFile(fileobj=archive.extractfile(_PROPS)) as props:
            sentence: List[str] = []
            rows: List[List[str]] = []
            for word, row in zip(words, props):
                row = row.decode().split()
                if row:
                    sentence.append(word.strip().decode())
                    rows.append(row)
                    continue
                columns = [list(c) for c in zip(*rows)]  # the verbs, then one column per predicate
                if columns:
                    verbs = [v for v in columns[0] if v != "-"]
                    for verb, column in zip(verbs, columns[1:]):
                        self.sentences.append(sentence)
                        self.predicates.append(verb)
                        self.labels.append(bio_tags(column))
                sentence, rows = [], []

    def __getitem__(self, idx: int) -> Tuple[np.ndarray, ...]:
        sentence, labels = self.sentences[idx], self.labels[idx]
        n = len(sentence)
        verb = labels.index("B-V")
        mark = [0] * len(labels)
        context = []
        for offset in (-2, -1, 0, 1, 2):
            at = verb + offset
            if 0 <= at < len(labels):
                mark[at] = 1
                context.append(sentence[at])
            else:
                context.append("bos" if offset < 0 else "eos")
        ids = [np.array([self.word_dict.get(w, UNK_IDX) for w in sentence])]
        ids += [np.array([self.word_dict.get(w, UNK_IDX)] * n) for w in context]
        ids.append(np.array([self.predicate_dict.get(self.predicates[idx])] * n))
        ids.append(np.array(mark))
        ids.append(np.array([self.label_dict.get(tag) for tag in labels]))
        return tuple(ids)

    def __len__(self) -> int:
        return len(self.sentences)

    def get_dict(self) -> Tuple[Dict[str, int], Dict[str, int], Dict[str, int]]:
        """(word_dict, predicate_dict, label_dict)."""
        return self.word_dict, self.predicate_dict, self.label_dict

    def get_embedding(self) -> str:
        """The path of the embedding file."""
        return self.emb_file
