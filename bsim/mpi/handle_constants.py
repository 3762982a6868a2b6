"""MPICH's handle values of the predefined communicators, groups, operations, requests and
messages (as mpi4py 4.1.2 on MPICH 4.x shows them), given to bsim's constants
(``bsim/mpi/common/handles.py``)."""

from __future__ import annotations

from .collectives import ops
from .common.handles import register_constant
from .comms.comm import COMM_NULL, COMM_SELF, COMM_WORLD
from .management.groups import GROUP_EMPTY, GROUP_NULL
from .p2p.message import MESSAGE_NO_PROC, MESSAGE_NULL
from .requests.request import REQUEST_NULL

__all__ = ["VALUES"]

VALUES = {
    "COMM_NULL": (COMM_NULL, 0x04000000), "COMM_WORLD": (COMM_WORLD, 0x44000000),
    "COMM_SELF": (COMM_SELF, 0x44000001), "GROUP_NULL": (GROUP_NULL, 0x08000000),
    "GROUP_EMPTY": (GROUP_EMPTY, 0x48000000), "REQUEST_NULL": (REQUEST_NULL, 0x2C000000),
    "MESSAGE_NULL": (MESSAGE_NULL, 0x2C000000), "MESSAGE_NO_PROC": (MESSAGE_NO_PROC, 0x6C000000),
    "OP_NULL": (ops.OP_NULL, 0x18000000),
    **{name: (getattr(ops, name), 0x58000000 + i) for i, name in enumerate(
        ("MAX", "MIN", "SUM", "PROD", "LAND", "BAND", "LOR", "BOR", "LXOR", "BXOR", "MINLOC",
         "MAXLOC", "REPLACE", "NO_OP"), start=1)},
}
"""Each constant and its handle value."""

for _obj, _value in VALUES.values():
    register_constant(_obj, _value)
