import pycoll.distributed.fleet as fleet
fleet.init()
fleet.worker_index()
