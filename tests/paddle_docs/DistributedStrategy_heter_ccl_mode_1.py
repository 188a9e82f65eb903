import pycoll
import pycoll.distributed.fleet as fleet
strategy = fleet.DistributedStrategy()
strategy.heter_ccl_mode = True
# for initialize parallel env, only need to call
pycoll.distributed.init_parallel_env()
# then the heterogeneous context will be created.
