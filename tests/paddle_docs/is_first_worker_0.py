import pycoll.distributed.fleet as fleet
fleet.init()
fleet.is_first_worker()
