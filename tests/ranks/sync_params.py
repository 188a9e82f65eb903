"""paddle's dist.parallel.sync_params_buffers on 2 ranks: parameters and BatchNorm's running
statistics (updated by each rank from its own batch) become rank src's; with is_model_parallel a
split weight (is_distributed) keeps its own block."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.parallel import sync_params_buffers

dist.init_parallel_env()
rank = dist.get_rank()
pycoll.seed(10 + rank)  # different weights on each rank
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1D(4))
model(pycoll.to_tensor(np.full((2, 3), rank + 1.0, np.float32)))  # running statistics differ too
model[0].bias.set_value(np.full(4, rank, np.float32))
model[0].bias.is_distributed = True  # as a model-parallel block would be marked
mine = {k: v.numpy().copy() for k, v in model.state_dict().items()}


def gathered(name):
    out = []
    dist.all_gather(out, pycoll.to_tensor(model.state_dict()[name].numpy().copy()))
    return [t.numpy() for t in out]


sync_params_buffers(model, src_rank=1, is_model_parallel=True)
for name in model.state_dict():
    values = gathered(name)
    if name == "0.bias":  # skipped: each rank keeps its own
        assert np.array_equal(values[rank], mine[name]) and not np.array_equal(values[0], values[1]), name
    else:
        assert np.array_equal(values[0], values[1]), f"{name} differs after the sync: {values}"
        if rank == 1:
            assert np.array_equal(values[1], mine[name]), f"{name}: rank 1's own value changed"
sync_params_buffers(model)  # everything, from rank 0 (the bias too)
assert all(np.array_equal(*gathered(name)) for name in model.state_dict())
try:
    sync_params_buffers(model, src_rank=5)
except ValueError as exc:
    assert "src_rank=5" in str(exc), exc
else:
    raise AssertionError("src_rank=5 was taken")
print(f"sync_params OK rank={rank}", flush=True)
