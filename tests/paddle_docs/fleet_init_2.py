import pycoll.distributed.fleet as fleet
role = fleet.PaddleCloudRoleMaker()
fleet.init(role)
