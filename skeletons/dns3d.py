"""dns3d: DNS3D's time step as a skeleton: pencil FFT compute, transposes as shifts.

The model is :mod:`skeletons.models.dns3d` (modeling tutorial, "Case study III").
Each iteration, for each of the 4 Runge-Kutta stages, every processor computes a
quarter of ``T_comp`` (each direction's 1-D FFTs counted as the decomposition does
them: ``(n_y/p_x)(n_z/p_z)`` of size ``n_x``, ``(n_x/p_x)(n_z/p_z)`` of size ``n_y``,
``(n_x/p_x)(n_y/p_z)`` of size ``n_z``; the tutorial's ``N_pencils`` in each for a
cubic grid) and performs a quarter of the Y<->X transposes (among the ``px``
processors of its row) and of the Y<->Z ones (among the ``pz`` of its column), each
transpose all ``p - 1`` shifts ``P_i -> P_{i+d}`` (``Sendrecv``) of ``V / (P p)``
points of 8 bytes, the ``(p - 1)/p * V/P`` remote points of the tutorial's volume
table; then one allreduce.  The counts 32 and 36 are divided over the stages as
evenly as possible.  Runs unchanged under real ``mpiexec``.
"""

from __future__ import annotations

from typing import Any

import bsim
from bsim.machines.kernels import MachineKernel

from .models.dns3d import XY_TRANSPOSES, YZ_TRANSPOSES, compute_time
from .registry import Param, Skeleton, grid, register

__all__ = ["main", "SKELETON", "run_flops"]

T_FLOP_ASSUMED = 1e-9
"""Seconds per FFT flop when no machine is named (ASSUMED, as PHASE's)."""


def run_flops(prm: dict[str, Any]) -> float:
    """FFT flops of the run: ``iterations * P * T_comp``'s FFT part counted at one flop per
    ``t_flop`` (``compute_time`` with ``t_flop = 1``, ``t_rk = 0``); for a power-of-two
    grid ``iterations * 36 * 5 V log2 V``, 36 3-D FFTs of ``V`` points per step."""
    grid = (prm["nx"], prm["ny"], prm["nz"])
    per_rank = compute_time(grid, prm["px"], prm["pz"], 1.0, 0.0)
    return float(prm["iterations"] * prm["px"] * prm["pz"] * per_rank)


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def main(nx: int = 256, ny: int = 256, nz: int = 256, px: int = 4, pz: int = 4,
         iterations: int = 1, t_flop: float = T_FLOP_ASSUMED, t_rk: float = 50e-9,
         t_local: float = 0.0, xy_transposes: int = XY_TRANSPOSES,
         yz_transposes: int = YZ_TRANSPOSES) -> float:
    """Run *iterations* time steps; return the calling rank's simulated (or real) finish."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != px * pz:
        raise ValueError(f"dns3d: needs px*pz = {px * pz} ranks, running on {size}")
    if nx % px or nz % pz or ny % px or ny % pz:   # the transposes split y over px and pz
        raise ValueError(f"dns3d: grid {nx}x{ny}x{nz} does not split into {px}x{pz} "
                         f"pencils (nx and ny over px={px}, nz and ny over pz={pz})")
    iz, ix = divmod(rank, px)            # x fastest: rank = iz px + ix (T_shift slide)
    row = comm.Split(iz, ix)             # the px processors of a row: Y<->X transposes
    col = comm.Split(size + ix, iz)      # the pz processors of a column: Y<->Z transposes
    points = nx * ny * nz // size
    t_stage = compute_time((nx, ny, nz), px, pz, t_flop, t_rk) / 4.0
    bufs = {c.Get_size(): (bsim.buffer(8 * points // c.Get_size(), MPI.BYTE),
                           bsim.buffer(8 * points // c.Get_size(), MPI.BYTE))
            for c in (row, col)}

    def transpose(c: object) -> None:
        p, me = c.Get_size(), c.Get_rank()   # type: ignore[attr-defined]
        send, recv = bufs[p]
        if t_local:
            bsim.add_time(t_local * points)
        for d in range(1, p):
            c.Sendrecv(send, dest=(me + d) % p, recvbuf=recv,  # type: ignore[attr-defined]
                       source=(me - d) % p, sendtag=d, recvtag=d)

    one, out = bsim.buffer(1, MPI.DOUBLE), bsim.buffer(1, MPI.DOUBLE)
    for _ in range(iterations):
        for xy, yz in zip(_split(xy_transposes, 4), _split(yz_transposes, 4), strict=True):
            bsim.add_time(t_stage)
            for _ in range(xy):
                transpose(row)
            for _ in range(yz):
                transpose(col)
        comm.Allreduce(one, out, op=MPI.MAX)
    return float(MPI.Wtime())


SKELETON = register(Skeleton(
    name="dns3d",
    main=main,
    description="DNS3D turbulence: 4 RK stages of pencil FFTs, 32 Y<->X and 36 Y<->Z "
                "transposes as shifts, one allreduce per step (tutorial)",
    params={
        "nx": Param("grid points in x", minimum=1),
        "ny": Param("grid points in y (the pencils' length)", minimum=1),
        "nz": Param("grid points in z", minimum=1),
        "px": Param("processes in x", minimum=1),
        "pz": Param("processes in z (ranks = px*pz)", minimum=1),
        "iterations": Param("time steps", minimum=0),
        "t_flop": Param("seconds per FFT flop (5 n log2 n per 1-D FFT; ASSUMED)", minimum=0),
        "t_rk": Param("seconds of spectral/real-space/RK work per grid point (ASSUMED 50 "
                      "FFT-flop times; --machine scales it with t_flop)", minimum=0),
        "t_local": Param("seconds of local copy per point per transpose", minimum=0),
        "xy_transposes": Param("Y<->X transposes per step", minimum=0),
        "yz_transposes": Param("Y<->Z transposes per step", minimum=0),
    },
    ranks=lambda prm: prm["px"] * prm["pz"],
    machine_kernel=MachineKernel(
        param="t_flop", table="dns3d", key="t_flop", unit="FFT flop", flops=1.0,
        fit_units=("flops", "flop"),
        source="one flop, at the machine's peak (a bound; no machine table measures it)",
        follows=("t_rk",)),
    flops=lambda prm, _returns: run_flops(prm),
    scale=lambda n: grid(n, 2, "px", "pz"),
))

if __name__ == "__main__":
    main()
