"""eval_batch(compute_loss=True) whose loss fails on the last stage (labels of another width) on 2
stages, plain and interleaved (argv[1] == "interleaved": two chunks a stage): both stages raise
(the first one saying the last failed, instead of waiting for the loss), nothing is left queued
between them, and the next train_batch gives the loss a pipeline that never failed gives."""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet import meta_parallel as mpp

strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 2}
strategy.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": 4}
fleet.init(is_collective=True, strategy=strategy)
rank = dist.get_rank()
data = np.random.default_rng(0)
x, y = (pycoll.to_tensor(data.standard_normal((8, n)).astype("float32")) for n in (4, 2))
wrong_width = pycoll.to_tensor(data.standard_normal((8, 3)).astype("float32"))


INTERLEAVED = sys.argv[1:] == ["interleaved"]


def pipeline():
    pycoll.seed(7)
    descs = [mpp.LayerDesc(nn.Linear, 4, 4)] * (3 if INTERLEAVED else 1) + [mpp.LayerDesc(nn.Linear, 4, 2)]
    chunks = dict(num_virtual_pipeline_stages=2, seg_method="layer:Linear") if INTERLEAVED else {}
    layers = mpp.PipelineLayer(descs, num_stages=2, topology=fleet.get_hybrid_communicate_group().topology(),
                               loss_fn=nn.MSELoss(), **chunks)
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.1, parameters=layers.parameters()))
    return fleet.distributed_model(layers), opt


failing, opt = pipeline()
try:
    failing.eval_batch([x, wrong_width], compute_loss=True)
    raise AssertionError("eval_batch returned a loss for labels of another width")
except RuntimeError as exc:
    assert rank == 0 and "the last stage (rank 1) failed computing the loss" in str(exc), exc
except ValueError as exc:  # the loss's own error, on the last stage
    assert rank == 1 and "do not broadcast" in str(exc), exc
after_failure = float(failing.train_batch([x, y], opt))

clean, opt = pipeline()
assert after_failure == float(clean.train_batch([x, y], opt)), after_failure
print(f"OK rank={rank}", flush=True)
