"""Sweep3D skeleton against the tutorial's pipeline model (modeling tutorial), ES40 parameters.

Every rank holds it = jt = 10 columns of nz = 100 cells; mm = 6 angles per
octant in blocks of mmi = 3; Tcell = 120 ns, Ts = 11 us, TB = 3.4 ns/B (the
``es40`` preset: ``[kernels.sweep3d]`` and its Hockney ``[network]``).  The
convergence allreduce is made free (``clog:c=0,d=0``) because the tutorial's
model has none.

Two protocols:

* ``sender+receiver``: ``bsim:send_cost=Tmsg``, each send also costs Tmsg.
  This is the tutorial's accounting (``d = 4``: an interior process pays two
  receives and two sends per wavefront), so its ``Tcomp + Tcomm`` is the
  reference.
* ``receiver`` (bsim's default, the BSIM paper): sends are free, a receive costs
  Tmsg.  Then one octant takes exactly
  ``(px+py+N-2) Tcpu + (px+N-2)(Ti+Tj) + (py-1) Tj`` (the longest path of
  ``docs/skeletons.md``), about ``Tcomp + Tcomm/2``.

Prints, for one octant and for a whole iteration (8 octants) over a sweep of
px, py and mk: the model, the simulated times and the errors.

    python benchmarks/sweep3d_model.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bsim  # noqa: E402
from bsim.machines import network_spec  # noqa: E402
from skeletons.models import sweep3d as model  # noqa: E402
from skeletons.sweep3d import main as sweep  # noqa: E402

IT = JT = 10
NZ, MM, MMI = 100, 6, 3
FREE = "clog:c=0,d=0"


def receiver_pays_octant(px: int, py: int, mk: int) -> float:
    """Closed form of one octant under the BSIM paper's rules (`bsim`) (docs/skeletons.md)."""
    n = model.nsweep(NZ, mk, MM, MMI)
    bi, bj = model.message_bytes(IT, JT, mk, MMI)
    ti = model.tmsg(bi) if px > 1 else 0.0
    tj = model.tmsg(bj) if py > 1 else 0.0
    return ((px + py + n - 2) * model.tcpu(IT, JT, mk, MMI)
            + (px + n - 2) * (ti + tj) + (py - 1) * tj)


def simulate(px: int, py: int, mk: int, octants: int, send_cost: float) -> float:
    kw = dict(nx=IT * px, ny=JT * py, nz=NZ, px=px, py=py, mm=MM, mk=mk, mmi=MMI,
              octants=octants)
    res = bsim.simulate(sweep, px * py, network=network_spec("es40"),
                        protocol=f"bsim:send_cost={send_cost!r}", collectives=FREE, kwargs=kw)
    return res.elapsed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few cases only")
    ns = ap.parse_args(argv)
    grids = [(2, 2), (3, 3), (4, 4), (8, 8), (4, 16), (16, 4), (16, 16)]
    mks = [1, 2, 5, 10]
    if ns.quick:
        grids, mks = [(4, 4), (8, 8)], [2, 10]
    t0 = time.perf_counter()
    for octants, label in ((1, "one octant"), (8, "one iteration (8 octants)")):
        print(f"\n{label}: ES40, it=jt={IT}, nz={NZ}, mm={MM}, mmi={MMI}; times in ms")
        print(f"{'px':>3} {'py':>3} {'mk':>3} {'Tcomp':>9} {'model':>9} | "
              f"{'snd+rcv':>9} {'error':>8} | {'receiver':>9} {'vs model':>8} "
              f"{'vs c+m/2':>8}" + (f" {'vs exact':>9}" if octants == 1 else ""))
        worst = 0.0
        for px, py in grids:
            for mk in mks:
                if octants == 1:
                    comp = model.octant_comp_time(px, py, NZ, mk, MM, MMI, IT, JT)
                    comm = model.octant_comm_time(px, py, NZ, mk, MM, MMI, IT, JT)
                else:
                    comp = model.iteration_comp_time(px, py, NZ, mk, MM, MMI, IT, JT)
                    comm = model.iteration_comm_time(px, py, NZ, mk, MM, MMI, IT, JT)
                tmsg = model.tmsg(model.message_bytes(IT, JT, mk, MMI)[0])
                both = simulate(px, py, mk, octants, tmsg)
                recv = simulate(px, py, mk, octants, 0.0)
                err = both / (comp + comm) - 1
                if min(px, py) >= 3:
                    worst = max(worst, abs(err))
                row = (f"{px:>3} {py:>3} {mk:>3} {comp * 1e3:>9.3f} {(comp + comm) * 1e3:>9.3f} | "
                       f"{both * 1e3:>9.3f} {err:>+8.2%} | {recv * 1e3:>9.3f} "
                       f"{recv / (comp + comm) - 1:>+8.2%} {recv / (comp + comm / 2) - 1:>+8.2%}")
                if octants == 1:
                    row += f" {recv / receiver_pays_octant(px, py, mk) - 1:>+9.1e}"
                print(row, flush=True)
        print(f"largest |error| of snd+rcv vs model for px, py >= 3: {worst:.3%}")
    print(f"\nhost time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
