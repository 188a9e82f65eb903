"""Optimizers (paddle.optimizer names and update rules) and their learning-rate schedulers."""
from pycoll.optimizer import lr
from pycoll.optimizer.adagrad import Adagrad
from pycoll.optimizer.adam import Adam, AdamW
from pycoll.optimizer.momentum import Momentum
from pycoll.optimizer.optimizer import Optimizer
from pycoll.optimizer.rmsprop import RMSProp
from pycoll.optimizer.sgd import SGD

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad", "lr"]
