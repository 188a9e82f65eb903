import pycoll
import pycoll.distributed as dist
mesh = dist.ProcessMesh([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], dim_names=["dp", "mp", "pp"])
# doctest: +REQUIRES(env:DISTRIBUTED)
dist.auto_parallel.set_mesh(mesh)
# This case need to be executed in multi-card environment
# python -m pycoll.distributed.launch --gpus=0,1,2,3,4,5,6,7 {test_case}.py
