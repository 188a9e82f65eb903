"""paddle.nn.layer.transformer: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.attention import MultiHeadAttention
from pycoll.nn.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                                   TransformerEncoderLayer)

__all__ = ["MultiHeadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]
