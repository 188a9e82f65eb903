"""paddle.nn.layer.loss: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.extra_losses import (CTCLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                                    PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from pycoll.nn.hierarchical_softmax import AdaptiveLogSoftmaxWithLoss, HSigmoidLoss
from pycoll.nn.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HingeEmbeddingLoss,
                            KLDivLoss, L1Loss, MSELoss, MarginRankingLoss, MultiLabelMarginLoss, NLLLoss, RNNTLoss,
                            SmoothL1Loss)

__all__ = ["AdaptiveLogSoftmaxWithLoss", "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HSigmoidLoss", "HingeEmbeddingLoss", "KLDivLoss", "L1Loss", "MSELoss",
           "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss",
           "PoissonNLLLoss", "RNNTLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss"]
