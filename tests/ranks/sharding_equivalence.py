"""group_sharded_parallel(level="os") trains exactly as plain DataParallel on the same data
(Adam, float32, parameters whose count does not divide by the world size): per-step losses and
final parameters equal, each rank holding the optimizer state of its share only; the saved
whole optimizer state loads back into an unsharded optimizer; bad input refused by name."""
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from expect import expect
from pycoll.distributed.sharding import group_sharded_parallel, save_group_sharded_model

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()


def net():
    pycoll.seed(7)
    return nn.Sequential(nn.Linear(5, 3), nn.Tanh(), nn.Linear(3, 7))


def train(sharded):
    model = net()
    opt = pycoll.optimizer.Adam(learning_rate=0.05, parameters=model.parameters())
    if sharded:
        model, opt, _ = group_sharded_parallel(model, opt, "os")
    else:
        model = pycoll.DataParallel(model)
    data = np.random.default_rng(rank)
    losses = []
    for _ in range(6):
        x = pycoll.to_tensor(data.standard_normal((4, 5)).astype(np.float32))
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return model, opt, losses


plain_model, plain_opt, plain_losses = train(False)
model, opt, losses = train(True)
np.testing.assert_allclose(losses, plain_losses, rtol=1e-5)
for (name, p), q in zip(model.named_parameters(), plain_model.parameters()):
    np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, err_msg=name)
held = sum(v.numpy().nbytes for v in opt.state_dict().values())
everything = sum(v.numpy().nbytes for v in plain_opt.state_dict().values())
shares = []
dist.all_gather_object(shares, held)
assert sum(shares) == everything and (n == 1 or max(shares) < everything), (shares, everything)

out = sys.argv[1]
save_group_sharded_model(model, out, opt)
dist.barrier()
whole = pycoll.load(os.path.join(out, "model.pdopt"))
again = pycoll.optimizer.Adam(learning_rate=0.05, parameters=model.parameters())  # unsharded
again.set_state_dict(whole)
restored, reference = again.state_dict(), plain_opt.state_dict()
assert len(restored) == len(reference)
for p, q in zip(model.parameters(), plain_model.parameters()):  # the same model, other names
    for acc in ("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc"):
        np.testing.assert_allclose(restored[f"{p.name}_{acc}_0"].numpy(), reference[f"{q.name}_{acc}_0"].numpy(),
                                   rtol=1e-5, err_msg=f"{p.name} {acc}")

layer = net()
adam = pycoll.optimizer.Adam(parameters=layer.parameters())
expect(ValueError, ["level='zero'", "os, os_g, p_g_os"], group_sharded_parallel, layer, adam, "zero")
expect(ValueError, ["level='os_g'", "not in pycoll yet"], group_sharded_parallel, layer, adam, "os_g")
expect(ValueError, ["already wrapped"], group_sharded_parallel, pycoll.DataParallel(net()), adam, "os")
expect(ValueError, ["exclude_layer names ['nope']"], group_sharded_parallel, layer, adam, "os",
       exclude_layer=["nope"])
print(f"sharding OK rank={rank} state_bytes={held} of {everything}", flush=True)
