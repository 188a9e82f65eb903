"""``pycoll.text``: paddle.text's ``viterbi_decode`` and ``ViterbiDecoder`` and its datasets
(``pycoll.text.datasets``, built on ``pycoll.io`` and so imported on first use)."""
from typing import Any, List

from pycoll.text.viterbi_decode import ViterbiDecoder, viterbi_decode

_DATASETS = ("Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16")

__all__ = ["viterbi_decode", "ViterbiDecoder", "datasets", *_DATASETS]


def __getattr__(name: str) -> Any:
    if name == "datasets" or name in _DATASETS:
        import pycoll.text.datasets as datasets

        return datasets if name == "datasets" else getattr(datasets, name)
    raise AttributeError(f"module 'pycoll.text' has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
