"""``pycoll.text``: paddle.text's ``viterbi_decode`` and ``ViterbiDecoder``."""
from pycoll.text.viterbi_decode import ViterbiDecoder, viterbi_decode

__all__ = ["viterbi_decode", "ViterbiDecoder"]
