# doctest: +REQUIRES(env:DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
emb = pycoll.nn.Embedding(10, 10)
emb = pycoll.DataParallel(emb)
state_dict = emb.state_dict()
pycoll.save(state_dict, "paddle_dy.pdparams")
para_state_dict = pycoll.load("paddle_dy.pdparams")
emb.set_state_dict(para_state_dict)
