"""``MPI.pickle`` with another serializer, and the ABI queries, as mpi4py has them: a
``dumps`` without a protocol argument is called without one; the lowercase calls use the
configured serializer."""

from __future__ import annotations

import json

import bsim
from bsim import MPI


def test_a_serializer_without_protocol_argument() -> None:
    def main() -> object:
        MPI.pickle.__init__(lambda o: json.dumps(o).encode(),
                            lambda s: json.loads(bytes(s).decode()))
        try:
            assert MPI.pickle.PROTOCOL is None
            got = MPI.COMM_SELF.sendrecv({"a": [1, 2]}, 0, 0, None, 0, 0)
            return got, MPI.pickle.dumps([1])
        finally:
            MPI.pickle.__init__()

    assert bsim.simulate(main, 1).returns == [({"a": [1, 2]}, b"[1]")]
    assert MPI.pickle.PROTOCOL is not None   # the default: pickle's highest


def test_abi_queries() -> None:
    assert MPI.Get_abi_version() == (-1, -1)
    info = MPI.Get_abi_info()
    try:
        assert {k: int(info.Get(f"mpi_{k}_size")) for k in ("aint", "count", "offset")} \
            == {"aint": MPI.AINT.Get_size(), "count": MPI.COUNT.Get_size(),
                "offset": MPI.OFFSET.Get_size()}
    finally:
        info.Free()
    assert MPI.Get_abi_fortran_info() == MPI.INFO_NULL
