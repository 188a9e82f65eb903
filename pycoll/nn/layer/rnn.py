"""paddle.nn.layer.rnn: the same objects as pycoll.nn's, at the module path paddle's docstrings import
from, with paddle's functional forms ``rnn`` / ``birnn`` and its state helpers."""
from pycoll.nn.rnn import (GRU, LSTM, RNN, ArrayWrapper, BiRNN, RNNBase, SimpleRNN, birnn, concat_states, rnn,
                           split_states)
from pycoll.nn.rnn_cells import GRUCell, LSTMCell, RNNCellBase, SimpleRNNCell

__all__ = ["ArrayWrapper", "BiRNN", "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCellBase",
           "SimpleRNN", "SimpleRNNCell", "birnn", "concat_states", "rnn", "split_states"]
