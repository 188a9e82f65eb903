"""paddle.nn.layer.rnn: the same objects as pycoll.nn's, at the module path paddle's docstrings import
from, and paddle's names that live only here: the functional forms ``rnn`` / ``birnn``, ``RNNBase``,
``split_states`` / ``concat_states`` and ``ArrayWrapper`` (outside ``__all__``, whose names are
pycoll.nn's, as paddle's own module exports none of them)."""
from pycoll.nn import rnn as _rnn_module
from pycoll.nn.rnn import GRU, LSTM, RNN, BiRNN, SimpleRNN
from pycoll.nn.rnn_cells import GRUCell, LSTMCell, RNNCellBase, SimpleRNNCell

__all__ = ["BiRNN", "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCellBase", "SimpleRNN", "SimpleRNNCell"]

rnn, birnn = _rnn_module.rnn, _rnn_module.birnn
RNNBase, ArrayWrapper = _rnn_module.RNNBase, _rnn_module.ArrayWrapper
split_states, concat_states = _rnn_module.split_states, _rnn_module.concat_states
