"""argparse on sys.argv, per-rank files named by rank in a shared temp dir."""
import argparse
import os
import tempfile

from mpi4py import MPI


def parse():
    p = argparse.ArgumentParser(description="demo")
    p.add_argument("--n", type=int, default=5)
    p.add_argument("--label", default="run")
    return p.parse_args()


def main():
    args = parse()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    tmp = comm.bcast(tempfile.mkdtemp(prefix="wild_") if rank == 0 else None, root=0)
    path = os.path.join(tmp, f"out_{rank:03d}.txt")
    with open(path, "w") as f:
        for i in range(args.n):
            f.write(f"{args.label} {rank} {i * rank}\n")
    comm.Barrier()
    if rank == 0:
        files = sorted(os.listdir(tmp))
        print("files", files)
        total = 0
        for name in files:
            with open(os.path.join(tmp, name)) as f:
                total += sum(int(line.split()[2]) for line in f)
        print("total", total, "label", args.label, "n", args.n)
        for name in files:
            os.remove(os.path.join(tmp, name))
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
