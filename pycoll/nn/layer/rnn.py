"""paddle.nn.layer.rnn: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.rnn import BiRNN, GRU, LSTM, RNN, SimpleRNN
from pycoll.nn.rnn_cells import GRUCell, LSTMCell, RNNCellBase, SimpleRNNCell

__all__ = ["BiRNN", "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCellBase", "SimpleRNN", "SimpleRNNCell"]
