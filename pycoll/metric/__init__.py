"""paddle.metric: the ``Metric`` protocol, ``Accuracy``, ``Precision``, ``Recall``, ``Auc`` and the
function ``accuracy``."""
from pycoll.metric.metrics import Accuracy, Auc, Metric, Precision, Recall, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]
