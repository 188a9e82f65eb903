"""paddle's ``fleet.base.role_maker`` path: the collective-mode role makers, pycoll's own
(``fleet.collective_mode``), and the roles they take (``fleet.Role``)."""
from pycoll.distributed.fleet.collective_mode import PaddleCloudRoleMaker, UserDefinedRoleMaker
from pycoll.distributed.fleet.role import Role

__all__ = ["PaddleCloudRoleMaker", "Role", "UserDefinedRoleMaker"]
