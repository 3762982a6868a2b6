"""A checkpoint through MPI-IO: predicted write bandwidth vs ranks and stripe count.

Every rank writes its block of a shared file (``bsim.buffer`` placeholders: sizes, no
bytes), independently (``Write_at``) or collectively (``Write_at_all``), on the default
``lustre`` model (docs/io.md) with 1, 8 and 64 stripes.  Prints the predicted time of the
write phase, the effective bandwidth and the host time per run.

    .venv/bin/python benchmarks/io_checkpoint.py [--quick] [--mib 64]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import bsim


def checkpoint(nbytes: int, collective: bool, path: str) -> float:
    """Open, write this rank's block at its offset, close; the write phase's time."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    fh = MPI.File.Open(comm, path, MPI.MODE_WRONLY | MPI.MODE_CREATE)
    comm.Barrier()
    t0 = MPI.Wtime()
    offset = comm.Get_rank() * nbytes
    if collective:
        fh.Write_at_all(offset, bsim.buffer(nbytes))
    else:
        fh.Write_at(offset, bsim.buffer(nbytes))
    t1 = MPI.Wtime()
    fh.Close()
    return t1 - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 and 256 ranks only")
    ap.add_argument("--mib", type=int, default=64, help="MiB written per rank")
    ns = ap.parse_args()
    nbytes = ns.mib << 20
    ranks = (64, 256) if ns.quick else (64, 256, 1024, 4096)
    fd, path = tempfile.mkstemp(prefix="bsim-io-bench-")
    os.close(fd)
    print(f"{'ranks':>6} {'stripes':>7} {'mode':>10} {'write s':>10} {'GB/s':>8} {'host s':>7}")
    try:
        for P in ranks:
            for stripes in (1, 8, 64):
                for collective in (False, True):
                    t = time.perf_counter()
                    res = bsim.simulate(checkpoint, P, args=(nbytes, collective, path),
                                        filesystem=f"lustre:stripe_count={stripes}",
                                        protocol="bsim")
                    host = time.perf_counter() - t
                    write = max(res.returns)
                    mode = "collective" if collective else "independ."
                    print(f"{P:>6} {stripes:>7} {mode:>10} {write:>10.4f} "
                          f"{P * nbytes / write / 1e9:>8.2f} {host:>7.2f}")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
