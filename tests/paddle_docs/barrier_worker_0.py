import pycoll.distributed.fleet as fleet
fleet.init()
fleet.barrier_worker()
