"""Optimizers (paddle.optimizer names and update rules) and their learning-rate schedulers."""
from pycoll.optimizer import lr
from pycoll.optimizer.adadelta import Adadelta
from pycoll.optimizer.adagrad import Adagrad
from pycoll.optimizer.adam import Adam
from pycoll.optimizer.adamax import Adamax
from pycoll.optimizer.adamw import AdamW
from pycoll.optimizer.asgd import ASGD
from pycoll.optimizer.lamb import Lamb
from pycoll.optimizer.lbfgs import LBFGS
from pycoll.optimizer.momentum import Momentum
from pycoll.optimizer.nadam import NAdam
from pycoll.optimizer.optimizer import Optimizer
from pycoll.optimizer.radam import RAdam
from pycoll.optimizer.rmsprop import RMSProp
from pycoll.optimizer.rprop import Rprop
from pycoll.optimizer.sgd import SGD

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad", "Lamb", "Adamax",
           "Adadelta", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "lr"]
