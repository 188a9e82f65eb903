"""Collective saves with a bad folder (2 ranks): save_group_sharded_model(output=...) and
dist.save_state_dict(path=...) given a file, or a folder that cannot be made, raise on EVERY rank
the error naming the argument, before anything is sent, and the job goes on (an all_reduce
after each completes); a good folder is then written as usual. argv[1]: a scratch folder both
ranks see."""
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.sharding import group_sharded_parallel, save_group_sharded_model

dist.init_parallel_env()
rank = dist.get_rank()
scratch = sys.argv[1]
a_file = os.path.join(scratch, "a_file")
if rank == 0:
    open(a_file, "w").close()
dist.barrier()
UNMAKEABLE = "/proc/pycoll_no_such_dir/out"  # /proc takes no new folders, whoever runs this


def refused(call, error, words):
    try:
        call()
    except error as e:
        assert all(w in str(e) for w in words), e
    else:
        raise AssertionError(f"{call} did not raise {error.__name__}")
    x = np.ones(1, "float32")
    dist.all_reduce(x)  # the job goes on: every rank raised, none waits in the save's collectives
    assert x[0] == 2.0, x


pycoll.seed(5)
layer = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 1))
model, opt, _ = group_sharded_parallel(layer, pycoll.optimizer.AdamW(parameters=layer.parameters()), "p_g_os")
model(pycoll.ones([2, 4])).mean().backward()
opt.step()
opt.clear_grad()
refused(lambda: save_group_sharded_model(model, a_file, opt), FileExistsError,
        ["save_group_sharded_model", f"output={a_file!r}", "is a file"])
refused(lambda: save_group_sharded_model(model, UNMAKEABLE, opt), FileNotFoundError,
        ["save_group_sharded_model", f"output={UNMAKEABLE!r}", "cannot make the folder"])
refused(lambda: save_group_sharded_model(model, 3, opt), TypeError, ["output must be a path", "int"])
refused(lambda: save_group_sharded_model(model, os.path.join(scratch, "x"), object()), TypeError,
        ["optimizer must be what group_sharded_parallel returned"])
good = os.path.join(scratch, "sharded")
save_group_sharded_model(model, good, opt)
saved = pycoll.load(os.path.join(good, "model.pdmodel"))
model.get_all_parameters()
for key, value in layer.state_dict().items():
    np.testing.assert_array_equal(np.asarray(saved[key]), value.numpy())
model.release_parameters()

state = nn.Linear(4, 4).state_dict()
refused(lambda: dist.save_state_dict(state, a_file), FileExistsError, ["save_state_dict", f"path={a_file!r}"])
refused(lambda: dist.save_state_dict(state, "/proc/xx/yy"), FileNotFoundError,
        ["save_state_dict", "path='/proc/xx/yy'", "cannot make the folder"])
dist.save_state_dict(state, os.path.join(scratch, "ckpt"))
assert "0.metadata" in os.listdir(os.path.join(scratch, "ckpt"))
print(f"save paths OK rank={rank}", flush=True)
