"""Communicators, groups, attributes and request lists give what mpi4py + MPICH give.

Each program's ``main()`` returns plain values; the literal expectations were read off
real ``mpiexec -n N`` (MPICH 4, mpi4py 4.1.2) and are what the MPI standard says where
it says it; they are compared again with real MPI when mpiexec and mpi4py are installed.
"""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

INTRACOMM_ONLY = '''
from mpi4py import MPI

NAMES = ["scan", "exscan", "Scan", "Exscan", "Iscan", "Iexscan", "Scan_init", "Exscan_init",
         "Create_group", "Create_cart"]


def main():
    world = MPI.COMM_WORLD
    r = world.rank
    local = world.Split(r % 2, r)
    ic = local.Create_intercomm(0, world, 1 - r % 2, tag=7)
    where = {name: [hasattr(MPI.Comm, name), hasattr(MPI.Intercomm, name),
                    hasattr(ic, name), hasattr(MPI.Intracomm, name), hasattr(local, name)]
             for name in NAMES}
    try:
        ic.Create_cart([ic.size])
        cart = "no error"
    except AttributeError:
        cart = "AttributeError"
    scanned = local.scan(r)
    ic.Free()
    local.Free()
    return [where, cart, scanned]
'''


def test_intercommunicators_have_no_intracommunicator_calls():
    """The scans, ``Create_group`` and ``Create_cart`` are ``Intracomm`` methods in mpi4py,
    absent from ``Comm`` and ``Intercomm`` (MPI 4.1 Sec. 6.2.2 defines no scan on an
    intercommunicator): calling one on an intercommunicator is an ``AttributeError``.
    bsim had them on ``Comm``; ``Create_cart`` on an intercommunicator deadlocked at 4
    ranks."""
    out = simulated_returns(4, INTRACOMM_ONLY)
    where = {name: [False, False, False, True, True] for name in
             ["scan", "exscan", "Scan", "Exscan", "Iscan", "Iexscan", "Scan_init",
              "Exscan_init", "Create_group", "Create_cart"]}
    assert out == [[where, "AttributeError", 0], [where, "AttributeError", 1],
                   [where, "AttributeError", 2], [where, "AttributeError", 4]]


# programs whose every rank's return must be the same under bsim and real mpiexec -n N
SAME_AS_REAL = {
    "intracomm-only": (INTRACOMM_ONLY, 4),
}


@needs_mpiexec
@pytest.mark.parametrize("case", SAME_AS_REAL)
def test_the_program_returns_what_real_mpi_returns(case):
    code, n = SAME_AS_REAL[case]
    assert real_mpi_returns(n, code) == simulated_returns(n, code, as_json=True)
