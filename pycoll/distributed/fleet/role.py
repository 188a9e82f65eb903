"""paddle's ``fleet.Role``: the role of a process in a fleet job, as the numbers paddle's role
makers take (``UserDefinedRoleMaker(role=Role.WORKER, ...)``). pycoll's jobs are collective:
every process is a WORKER; the other roles are named so that code comparing roles runs."""


class Role:
    WORKER = 1
    SERVER = 2
    HETER_WORKER = 3
    ALL = 4
    COORDINATOR = 5
