"""paddle's ``fleet.base.role_maker`` path: the collective-mode role makers, pycoll's own
(``fleet.collective_mode``)."""
from pycoll.distributed.fleet.collective_mode import PaddleCloudRoleMaker, UserDefinedRoleMaker

__all__ = ["PaddleCloudRoleMaker", "UserDefinedRoleMaker"]
