"""paddle's ``paddle.incubate.distributed.models.moe``: the mixture-of-experts layer over ranks
(``MoELayer``), its gates (``NaiveGate``, ``GShardGate``, ``SwitchGate``, ``BaseGate``), the
expert-aware global-norm clip (``ClipGradForMOEByGlobalNorm``, also ``ClipGradByGlobalNorm`` as in
paddle) and, in ``utils``, the expert counting (``count_by_gate``, ``limit_by_capacity``)."""
from pycoll.incubate.distributed.models.moe import utils
from pycoll.incubate.distributed.models.moe.gate import BaseGate, GShardGate, NaiveGate, SwitchGate
from pycoll.incubate.distributed.models.moe.grad_clip import ClipGradForMOEByGlobalNorm
from pycoll.incubate.distributed.models.moe.moe_layer import MoELayer

ClipGradByGlobalNorm = ClipGradForMOEByGlobalNorm

__all__ = ["BaseGate", "ClipGradByGlobalNorm", "ClipGradForMOEByGlobalNorm", "GShardGate", "MoELayer", "NaiveGate",
           "SwitchGate", "utils"]
