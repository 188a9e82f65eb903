"""GradScaler over ranks whose gradients differ (sharded pieces): only rank 1's piece holds an inf.
Through ``group_sharded_parallel(..., scaler=)`` and through ``fleet.distributed_scaler`` every rank
skips that step and halves its scale; a plain scaler would let rank 0 step alone. The scaler is
made to act on host arrays as it does on a GPU (2 ranks)."""
import warnings

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.amp import grad_scaler
from pycoll.distributed import fleet
from pycoll.distributed.sharding import group_sharded_parallel

grad_scaler.on_accelerator = lambda: True


def sharded_step(wrap_scaler):
    pycoll.seed(0)
    model = nn.Linear(4, 4)
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    scaler = pycoll.amp.GradScaler(init_loss_scaling=4.0)
    model, opt, scaler = wrap_scaler(model, opt, scaler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # on the CPU auto_cast says it makes no effect
        with pycoll.amp.auto_cast():  # float16: the scaler scales after it (paddle's rule)
            loss = model(pycoll.ones([2, 4])).mean()
    scaler.scale(loss).backward()
    if dist.get_rank() == 1:
        opt.step_grads()[0][...] = np.inf  # this rank's piece only
    before = [p.numpy().copy() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b)
    assert scaler.state_dict()["scale"].tolist() == [2.0]


def through_sharding(model, opt, scaler):
    return group_sharded_parallel(model, opt, "os_g", scaler=scaler)


def through_fleet(model, opt, scaler):
    model, opt, _ = group_sharded_parallel(model, opt, "os_g")
    return model, opt, fleet.distributed_scaler(scaler)


def main():
    strategy = fleet.DistributedStrategy()
    fleet.init(is_collective=True, strategy=strategy)
    sharded_step(through_sharding)
    sharded_step(through_fleet)
    print(f"OK rank={dist.get_rank()}", flush=True)


if __name__ == "__main__":
    main()
