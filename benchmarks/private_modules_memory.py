"""Memory and time of per-rank module copies (bsim.engine.private_modules), in one sitting.

For each module size, the same program -- every rank imports a module of the
program's own (written to a temporary directory) and meets the others at a
barrier -- runs in a fresh process with private modules (each rank its copy)
and with ``private_modules=False`` (one shared copy); printed: peak RSS of
both, the difference per rank in KiB, and both wall times.

    python benchmarks/private_modules_memory.py [--ranks 2000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    sys.path[:0] = [{root!r}, {tmp!r}]
    import bsim
    from bsim import MPI

    def main():
        import {module}
        MPI.COMM_WORLD.Barrier()

    t = time.perf_counter()
    bsim.simulate(main, {ranks}, private_modules={private}, protocol="bsim")
    print(json.dumps([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      time.perf_counter() - t]))
""")


def module_source(functions: int) -> str:
    """A module of *functions* small functions and a class per ten of them."""
    out = ["TABLE = {}", ""]
    for i in range(functions):
        out += [f"def f{i}(x, y=1):", f"    '''Function {i}.'''",
                f"    return x * {i} + y - TABLE.get({i}, 0)", ""]
        if i % 10 == 9:
            out += [f"class C{i}:", "    def __init__(self, v):", "        self.v = v",
                    "    def get(self):", "        return self.v", ""]
    return "\n".join(out)


def measure(tmp: str, module: str, ranks: int, private: bool) -> tuple[int, float]:
    code = CHILD.format(root=str(ROOT), tmp=tmp, module=module, ranks=ranks, private=private)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return tuple(json.loads(out.strip().splitlines()[-1]))   # type: ignore[return-value]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=2000)
    a = ap.parse_args(argv)
    print(f"{'module':<22} {'ranks':>6} {'shared MiB':>10} {'private MiB':>11} "
          f"{'KiB/rank':>9} {'shared s':>8} {'private s':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for functions in (0, 10, 100, 500):
            name = f"pm_bench_{functions}"
            Path(tmp, f"{name}.py").write_text(module_source(functions))
            lines = len(module_source(functions).splitlines())
            shared, t_shared = measure(tmp, name, a.ranks, False)
            private, t_private = measure(tmp, name, a.ranks, True)
            print(f"{lines:>5}-line module       {a.ranks:>6} {shared / 1024:>10.1f} "
                  f"{private / 1024:>11.1f} {(private - shared) / a.ranks:>9.1f} "
                  f"{t_shared:>8.2f} {t_private:>9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
