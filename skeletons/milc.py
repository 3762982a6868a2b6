"""milc_cg and milc_rmd: MILC's conjugate gradient and su3_rmd (MILC paper and 001).

The global ``nx x ny x nz x nt`` lattice is split over a 4-D process grid
``px x py x pz x pt`` (MILC's balanced choice, :func:`balanced_grid`, unless
given); rank ``= x + px*(y + py*(z + pz*t))`` (x fastest, MILC's
``node_number``).  Each rank holds ``L = (nx/px, ny/py, nz/pz, nt/pt)``,
``V = prod(L)`` sites.  Periodic neighbours in all 8 directions.

A *gather* along direction ``k`` (dimension ``k % 4``, ``+`` for ``k < 4``)
receives the face of the neighbour in that direction and sends the own face
to the opposite neighbour.  A face normal to dimension ``d`` has ``V / L_d``
sites, so the message sizes are (MILC paper, Sec. II-D, generalised to unequal
extents as in :mod:`skeletons.models.milc`, choice 4)::

    A_d = 18 f V / L_d      su3 matrices, one-deep halo (LL, FL, GF, FF)
    A_d / 2                 su3 vectors, three-deep halo, even or odd sites (CG iteration)
    A_d / 6                 su3 vectors, one-deep halo, even or odd sites (CG start)

A dimension that is not cut (``p_d = 1``) gathers locally: no message.
Gathers are issued in rounds of up to 8 (one per direction, all posted, then
``Waitall``), as MILC's ``start_gather``/``wait_gather`` pairs do; ``n``
gathers of one kind spread evenly over the dimensions (``n/4`` each, the
directions ``+`` and ``-`` alternating).

``milc_cg`` (``ks_congrad``), per invocation::

    16 gathers of A_d/6; allreduce of 2 doubles          (start: r = b - M x, |r|^2)
    per iteration: 16 gathers of A_d/2; add_time(T(CG, V)); allreduce of 2 doubles

``niters`` is the total number of iterations (MILC paper's meta parameter),
spread over the invocations as evenly as possible (the first ones get the
remainder).  ``T(B, V) = b1 min(s, V) + b2 max(0, V - s)`` (Eq. 1) with the
kernel table of ``machine`` (a preset name or a ``.toml`` path).

``milc_rmd`` (``su3_rmd``, R algorithm) runs ``warms + trajecs``
trajectories of ``steps`` steps and measures after every ``meas``-th
trajectory past the warm-ups::

    step:        LL, FL, CG, CG, GF, LL, FL, FF, LL, FL
    measurement: LL, FL, CG, CG, 2 allreduces (the measurement's global sums)

with per call ``add_time(T(B, V))`` and gathers of size ``A_d``: LL 8, FL 288,
GF 828, FF 1616 (MILC paper, Sec. II-D table).  These are exactly the call,
gather and allreduce counts of Eqs. 2-4; the order inside a step is ours (it
does not change the time: all ranks run in lockstep).

``layout`` (layout paper) places the ranks on nodes: a NodeVolume shape
``AxBxCxD`` (ranks per node in each direction, dividing the process grid)
becomes the mapping ``nodevolume:grid=QxQxQxQ;node=AxBxCxD`` of the network
model (:func:`layout_mapping`; ``bsim run`` applies it to the network spec).
Any other mapping spec (``block:cores=8``) is passed on as it is.  Under real
``mpiexec`` the layout is ignored.

Both run unchanged under real ``mpiexec``.
"""

from __future__ import annotations

import math
from typing import Any

import bsim
from bsim.machines import load_machine
from bsim.machines.kernels import MachineKernel, check_fit_unit
from netmodels.input_files import per_run

from .models.milc import kernel_time, local_extents
from .registry import Param, Skeleton, register

__all__ = ["cg_main", "rmd_main", "balanced_grid", "process_grid", "layout_mapping",
           "milc_kernels", "MILC_CG", "MILC_RMD", "GATHERS"]

PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53)
"""MILC's ``prime[]`` table (``layout_hyper_prime.c``)."""

GATHERS = {"LL": 8, "FL": 288, "GF": 828, "FF": 1616}
"""Gathers of size ``A`` per call (MILC paper, Sec. II-D)."""
CG_GATHERS = 16
"""Gathers per CG iteration (``A/2``) and per CG start (``A/6``)."""


def balanced_grid(lattice: tuple[int, int, int, int], nprocs: int) -> tuple[int, int, int, int]:
    """MILC's ``setup_hyper_prime``: the process grid for *nprocs* ranks.

    Repeatedly take the largest prime factor left in the rank count, find the
    largest local extent divisible by it, and cut the first dimension of that
    extent already cut (else the first of that extent).  Raises
    :class:`ValueError` when the lattice runs out of factors (MILC: "Can't lay
    out this lattice").
    """
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"milc: number of ranks must be an int >= 1, got {nprocs!r}")
    size = list(lattice)
    grid = [1, 1, 1, 1]
    done = 1
    while done < nprocs:
        k = len(PRIMES) - 1
        while (nprocs // done) % PRIMES[k] and k > 0:
            k -= 1
        prime = PRIMES[k]
        if (nprocs // done) % prime:
            raise ValueError(f"milc: {nprocs} ranks have a prime factor above {PRIMES[-1]}")
        largest = max((s for s in size if s % prime == 0), default=0)
        cand = [d for d in range(4) if size[d] == largest and largest > 0]
        if not cand:
            raise ValueError(f"milc: can't lay out lattice {tuple(lattice)} on {nprocs} ranks, "
                             f"not enough factors of {prime}")
        cut = [d for d in cand if grid[d] > 1]
        d = (cut or cand)[0]
        done *= prime
        size[d] //= prime
        grid[d] *= prime
    return (grid[0], grid[1], grid[2], grid[3])


def process_grid(nx: int, ny: int, nz: int, nt: int, nprocs: int,
                 px: int = 0, py: int = 0, pz: int = 0, pt: int = 0) -> tuple[int, int, int, int]:
    """The given grid ``(px, py, pz, pt)``, or MILC's balanced one when all are 0.

    Raises :class:`ValueError` for a partly given grid, a grid whose product is
    not *nprocs* (when *nprocs* > 0), or one that does not divide the lattice.
    """
    given = (px, py, pz, pt)
    if any(given):
        if not all(isinstance(p, int) and p >= 1 for p in given):
            raise ValueError(f"milc: give all of px, py, pz, pt (>= 1) or none, got {given}")
        grid = given
        if nprocs and math.prod(grid) != nprocs:
            raise ValueError(f"milc: grid {given} holds {math.prod(grid)} ranks, not {nprocs}")
    else:
        grid = balanced_grid((nx, ny, nz, nt), nprocs)
    local_extents((nx, ny, nz, nt), grid)   # raises unless p_d | n_d
    return grid


def layout_mapping(layout: str, grid: tuple[int, ...]) -> str | None:
    """The network mapping spec of a ``layout`` parameter (None for ``""``).

    ``"AxBxCxD"`` -> ``"nodevolume:grid=<grid>;node=AxBxCxD"`` (checked: four
    extents dividing the grid); anything else is taken as a mapping spec.
    """
    text = layout.strip()
    if not text:
        return None
    parts = text.lower().split("x")
    if all(p.isdigit() for p in parts):
        node = tuple(int(p) for p in parts)
        if len(node) != 4 or any(n < 1 or q % n for n, q in zip(node, grid, strict=True)):
            raise ValueError(f"milc: layout {layout!r} is not a NodeVolume dividing the "
                             f"process grid {'x'.join(map(str, grid))}")
        return f"nodevolume:grid={'x'.join(map(str, grid))};node={'x'.join(map(str, node))}"
    return text


RMD_KERNELS = ("LL", "FL", "GF", "FF", "CG")
"""The kernels of su3_rmd (MILC paper, Eqs. 2-4); ks_congrad takes ``CG`` alone."""


def milc_kernels(machine: str, names: tuple[str, ...] = RMD_KERNELS
                 ) -> tuple[dict[str, tuple[float, float, float]], int]:
    """``({kernel: (b1, b2, s)}, float_bytes)`` of the kernels *names* from a preset's
    ``[kernels.milc]``: only those are read and their units checked.

    Read once per run (:func:`~netmodels.input_files.per_run`), not once per process:
    each run reads a machine file afresh and records it (``Result.inputs``)."""
    read: tuple[dict[str, tuple[float, float, float]], int] = per_run(
        ("milc kernels", machine, names), lambda: _read_kernels(machine, names))
    return read


def _read_kernels(machine: str, names: tuple[str, ...]
                  ) -> tuple[dict[str, tuple[float, float, float]], int]:
    m = load_machine(machine)
    table = m.kernels.get("milc")
    if not table:
        raise ValueError(f"milc: machine {machine!r} has no [kernels.milc] table")
    for name in names:   # Eq. 1 is per site
        check_fit_unit(table[name], ("sites",), f"{m.label}: [kernels.milc] {name}",
                       "MILC's kernels take seconds per site")
    kernels = {name: (float(table[name]["b1"]), float(table[name]["b2"]), float(table[name]["s"]))
               for name in names}
    return kernels, int(table.get("float_bytes", 4))


class _Lattice:
    """One rank's place in the process grid: neighbours, buffers, gathers and sums."""

    def __init__(self, MPI: Any, comm: Any, lattice: tuple[int, int, int, int],
                 grid: tuple[int, int, int, int], f: int) -> None:
        self.MPI, self.comm = MPI, comm
        self.grid = grid
        ext = local_extents(lattice, grid)
        self.volume = math.prod(ext)
        rank = r = comm.Get_rank()
        coords = []
        for q in grid:   # x fastest
            r, x = divmod(r, q)
            coords.append(x)
        strides = [math.prod(grid[:d]) for d in range(4)]
        # neighbour in direction k: dimension k % 4, + for k < 4
        self.nbr = []
        for k in range(8):
            d, step = k % 4, (1 if k < 4 else -1)
            x = (coords[d] + step) % grid[d]
            self.nbr.append(rank + (x - coords[d]) * strides[d])
        face = [18 * f * self.volume // e for e in ext]     # A_d in bytes
        self.sizes = {1: face, 2: [a // 2 for a in face], 6: [a // 6 for a in face]}
        self.recv = {div: [bsim.buffer(s[k % 4], MPI.BYTE) for k in range(8)]
                     for div, s in self.sizes.items()}
        self.send = {div: [bsim.buffer(s[d], MPI.BYTE) for d in range(4)]
                     for div, s in self.sizes.items()}
        self.sum_in, self.sum_out = bsim.buffer(2, MPI.DOUBLE), bsim.buffer(2, MPI.DOUBLE)

    def gathers(self, count: int, div: int) -> None:
        """*count* gathers of size ``A_d / div``: ``count/4`` per dimension, rounds of <= 8."""
        if count % 4:
            raise ValueError(f"milc: gather count {count} is not a multiple of 4")
        per_dir = [count // 8 + (1 if k < (count % 8) else 0) for k in range(8)]
        recv, send, comm = self.recv[div], self.send[div], self.comm
        while any(per_dir):
            reqs = []
            for k in range(8):
                if per_dir[k] == 0:
                    continue
                per_dir[k] -= 1
                d = k % 4
                if self.grid[d] == 1:
                    continue   # uncut dimension: the gather is a local copy
                reqs.append(comm.Irecv(recv[k], source=self.nbr[k], tag=k))
                reqs.append(comm.Isend(send[d], dest=self.nbr[(k + 4) % 8], tag=k))
            if reqs:
                self.MPI.Request.Waitall(reqs)

    def allreduce(self) -> None:
        """A global sum of two doubles (CG's residual norms)."""
        self.comm.Allreduce(self.sum_out, self.sum_in, op=self.MPI.SUM)


def _cg_invocation(lat: _Lattice, iterations: int, t_cg: float) -> None:
    """One ``ks_congrad`` call: start (16 gathers of A/6, allreduce), then *iterations*."""
    lat.gathers(CG_GATHERS, 6)
    lat.allreduce()
    for _ in range(iterations):
        lat.gathers(CG_GATHERS, 2)
        bsim.add_time(t_cg)
        lat.allreduce()


def _split(total: int, parts: int) -> list[int]:
    """*total* spread over *parts* as evenly as possible, the first ones taking the rest."""
    base, extra = divmod(total, parts) if parts else (0, 0)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _setup(MPI: Any, nx: int, ny: int, nz: int, nt: int, nprocs: int, px: int, py: int,
           pz: int, pt: int, machine: str, f: int, names: tuple[str, ...] = RMD_KERNELS
           ) -> tuple[_Lattice, dict[str, float]]:
    comm = MPI.COMM_WORLD
    size = comm.Get_size()
    if nprocs and not any((px, py, pz, pt)) and nprocs != size:
        raise ValueError(f"milc: nprocs={nprocs} but running on {size} ranks")
    grid = process_grid(nx, ny, nz, nt, size, px, py, pz, pt)
    kernels, f_preset = milc_kernels(machine, names)
    lat = _Lattice(MPI, comm, (nx, ny, nz, nt), grid, f or f_preset)
    times = {name: kernel_time(b1, b2, s, lat.volume) for name, (b1, b2, s) in kernels.items()}
    return lat, times


def _check_counts(**counts: int) -> None:
    for key, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"milc: {key} must be an int >= 0, got {value!r}")


def cg_main(nx: int = 16, ny: int = 16, nz: int = 16, nt: int = 16, nprocs: int = 0,
            px: int = 0, py: int = 0, pz: int = 0, pt: int = 0, niters: int = 100,
            invocations: int = 1, machine: str = "bgp", f: int = 0,
            layout: str = "") -> float:
    """Run *invocations* CG solves with *niters* iterations in all; return the finish time."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    _check_counts(niters=niters, invocations=invocations, f=f)
    if niters and not invocations:
        raise ValueError(f"milc: {niters} CG iterations need invocations >= 1")
    lat, times = _setup(MPI, nx, ny, nz, nt, nprocs, px, py, pz, pt, machine, f, ("CG",))
    for iterations in _split(niters, invocations):
        _cg_invocation(lat, iterations, times["CG"])
    return float(MPI.Wtime())


def rmd_main(nx: int = 16, ny: int = 16, nz: int = 16, nt: int = 16, nprocs: int = 0,
             px: int = 0, py: int = 0, pz: int = 0, pt: int = 0, warms: int = 0,
             trajecs: int = 1, steps: int = 1, meas: int = 1, niters: int = 100,
             machine: str = "bgp", f: int = 0, layout: str = "") -> float:
    """Run su3_rmd (R algorithm); return the calling rank's finish time."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    _check_counts(warms=warms, trajecs=trajecs, steps=steps, niters=niters, f=f)
    if isinstance(meas, bool) or not isinstance(meas, int) or meas < 1:
        raise ValueError(f"milc: meas must be an int >= 1, got {meas!r}")
    lat, times = _setup(MPI, nx, ny, nz, nt, nprocs, px, py, pz, pt, machine, f)
    measurements = trajecs // meas
    solves = 2 * steps * (warms + trajecs) + 2 * measurements
    if niters and not solves:
        raise ValueError(f"milc: {niters} CG iterations need a CG solve: warms + trajecs "
                         f"= {warms + trajecs} trajectories of steps = {steps} and "
                         f"{measurements} measurements run none")
    cg_iters = iter(_split(niters, solves))

    def kernel(name: str) -> None:
        lat.gathers(GATHERS[name], 1)
        bsim.add_time(times[name])

    def links() -> None:
        kernel("LL")
        kernel("FL")

    def cg_pair() -> None:   # light and heavy quark masses
        _cg_invocation(lat, next(cg_iters), times["CG"])
        _cg_invocation(lat, next(cg_iters), times["CG"])

    for traj in range(warms + trajecs):
        for _ in range(steps):
            links()
            cg_pair()
            kernel("GF")
            links()
            kernel("FF")
            links()
        if traj >= warms and (traj - warms + 1) % meas == 0:
            links()
            cg_pair()
            lat.allreduce()
            lat.allreduce()
    return float(MPI.Wtime())


def _grid_of(p: dict[str, Any]) -> tuple[int, int, int, int]:
    given = (p["px"], p["py"], p["pz"], p["pt"])
    return process_grid(p["nx"], p["ny"], p["nz"], p["nt"], 0 if any(given) else p["nprocs"],
                        *given)


def _ranks(p: dict[str, Any]) -> int:
    return math.prod(_grid_of(p))


def _mapping(p: dict[str, Any]) -> str | None:
    return layout_mapping(p["layout"], _grid_of(p))


_GEOMETRY = {
    "nx": Param("global lattice sites in x", minimum=1),
    "ny": Param("global lattice sites in y", minimum=1),
    "nz": Param("global lattice sites in z", minimum=1),
    "nt": Param("global lattice sites in t", minimum=1),
    # bsim run defaults to 16 ranks; the program under mpiexec uses the world size (0)
    "nprocs": Param("ranks for MILC's balanced grid (ignored when px..pt are given)",
                    default=16, minimum=0),
    "px": Param("processes in x (0: MILC's balanced grid; give all four or none)", minimum=0),
    "py": Param("processes in y", minimum=0),
    "pz": Param("processes in z", minimum=0),
    "pt": Param("processes in t", minimum=0),
}
_MACHINE = {
    "machine": Param("preset (or .toml) whose [kernels.milc] gives b1, b2, s, f"),
    "f": Param("bytes per float (0: the preset's float_bytes)", minimum=0),
    "layout": Param("NodeVolume AxBxCxD (ranks per node per direction) or a mapping spec"),
}

MILC_CG = register(Skeleton(
    name="milc_cg",
    main=cg_main,
    description="MILC ks_congrad: 16 4-D halo gathers + T(CG, V) + allreduce per iteration "
                "(MILC paper)",
    params={**_GEOMETRY,
            "niters": Param("CG iterations in all invocations together", minimum=0),
            "invocations": Param("CG calls (16 gathers of A/6 and an allreduce each)", minimum=1),
            **_MACHINE},
    ranks=_ranks,
    mapping=_mapping,
    machine_kernel=MachineKernel(param="machine", table="milc", keys=("CG", "float_bytes")),
    scale=lambda n: {"nprocs": n},
))

MILC_RMD = register(Skeleton(
    name="milc_rmd",
    main=rmd_main,
    description="MILC su3_rmd: LL, FL, GF, FF and CG with the call and gather counts of "
                "the MILC paper, Eqs. 2-4",
    params={**_GEOMETRY,
            "warms": Param("warm-up trajectories", minimum=0),
            "trajecs": Param("trajectories", minimum=0),
            "steps": Param("steps per trajectory", minimum=0),
            "meas": Param("trajectories between measurements", minimum=1),
            "niters": Param("CG iterations in all (the paper's meta parameter)", minimum=0),
            **_MACHINE},
    ranks=_ranks,
    mapping=_mapping,
    machine_kernel=MachineKernel(param="machine", table="milc",
                                 keys=(*RMD_KERNELS, "float_bytes")),
    scale=lambda n: {"nprocs": n},
))

if __name__ == "__main__":
    cg_main()
