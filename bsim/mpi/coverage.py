"""Which names of mpi4py's API bsim simulates: computed from the code, not written by hand.

:func:`coverage` compares the real ``mpi4py.MPI`` (when it is installed) with
``bsim.MPI``: every public module-level name and every public member of every
class, each *simulated* (bsim has it; :data:`DIFFERENCES` notes where it behaves
differently on purpose) or *not simulated* (with the reason of its family in
:data:`NOT_SIMULATED`).  Every module-level name exists in ``bsim.MPI``: the ones
not simulated are stand-ins (``bsim/mpi/common/namespace.py``) that import and raise
``NotSimulatedError`` where used.  ``bsim list mpi`` prints the summary and
``python -m bsim.mpi.coverage > docs/mpi_coverage.md`` writes the page.
"""

from __future__ import annotations

import inspect
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Row", "coverage", "summary", "markdown", "NOT_SIMULATED", "DIFFERENCES"]

NOT_SIMULATED: dict[str, str] = {}
"""Families bsim does not simulate, and why (class or name -> reason)."""

DIFFERENCES = {
    **{f"Prequest.{m}": "on the partitioned requests of Psend_init and Precv_init"
       for m in ("Pready", "Pready_range", "Pready_list", "Parrived")},
    "Wtime": "the calling rank's simulated clock",
    "Wtick": "1 ns (simulated time is a float)",
    "Get_processor_name": "``nodeN``, the simulated node of the calling rank",
    "Comm.Abort": "ends the whole simulation with SimulationError naming the rank",
    "Init": "initializes the calling rank when mpi4py.rc.initialize is False; an error "
            "otherwise, as in mpi4py (MPI is initialized on import)",
    "Finalize": "marks the calling rank finalized: its later MPI calls are errors",
    "Comm.Idup": "the duplicate is made at the call (its collective cost charged there); "
                 "the request is complete",
    "Comm.Idup_with_info": "as Idup, with the hints kept as MPICH keeps them (they change "
                           "no simulated time)",
    "Win.Sync": "a poll (the protocol's poll_time): the memory model is unified and shared",
    "Win.Get_info": "a new empty info: window hints change no simulated time and are not kept",
    "Comm.Get_info": "MPICH's twelve communicator hints, at their defaults or as the "
                     "process set them (bsim/mpi/management/hints.py); they change no simulated "
                     "time",
    "Info.Get": "INFO_ENV's keys are read when asked: the program's command line, the run's "
                "world size (maxprocs), the rank's simulated node (host)",
    "Win.Allocate_shared": "each rank's memory is its own allocation (as with "
                           "alloc_shared_noncontig); members are not checked to share a node",
    "Win.Flush_local": "local completion is remote completion (docs/rma.md)",
    "Intracomm.Accept": "the root must be the rank that opened the port",
    "Intracomm.Spawn": "new virtual ranks running a Python program (interpreter with a "
                       "script, -c or -m, or a Python script); any other command raises "
                       "NotSimulatedError; process start-up is not priced",
    "Intracomm.Spawn_multiple": "as Spawn, for each command",
    "Query_thread": "the level the rank asked for (mpi4py.rc.thread_level, THREAD_SINGLE "
                    "without rc.threads, Init_thread's request); at any level a rank's "
                    "Python threads run as thread contexts with their own clocks, one MPI "
                    "call at a time (docs/architecture.md)",
    **{f"Intercomm.I{name}": "runs at the call (its cost charged there); the request is "
       "complete" for name in ("barrier", "bcast", "gather", "gatherv", "scatter", "scatterv",
                               "allgather", "allgatherv", "alltoall", "alltoallv",
                               "alltoallw", "reduce", "allreduce", "reduce_scatter",
                               "reduce_scatter_block")},
    "File.Set_atomicity": "kept; every access is atomic in bsim (one host process)",
    "File.Sync": "a barrier plus one call's latency: writes are visible at once (docs/io.md)",
    "File.Set_info": "hints are kept and returned by Get_info; no model reads them",
    "Register_datarep": "per rank; as with MPICH's ROMIO, views cannot use the "
                        "registered representation (docs/io.md)",
    **{f"Datatype.Create_{kind}": "real data moves through the layout in point-to-point and "
       "every collective, except that an MPI.BOTTOM buffer of the v and w collectives "
       "takes one contiguous run per datatype"
       for kind in ("vector", "hvector", "indexed", "hindexed", "indexed_block",
                    "hindexed_block", "subarray", "struct", "resized")},
}
"""Names bsim simulates with a documented difference from a real MPI."""


@dataclass(frozen=True)
class Row:
    """One name: ``scope`` (``MPI`` or a class), ``name``, ``status``, ``note``."""

    scope: str
    name: str
    status: str     # "simulated", "not simulated"
    note: str = ""


def _public(obj: Any) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _has(cls: Any, member: str) -> bool:
    """*cls* or one of the subclasses bsim returns for it has *member* (``Prequest``'s
    ``Pready``... are on the partitioned requests ``Psend_init`` and ``Precv_init`` make)."""
    return hasattr(cls, member) or any(hasattr(sub, member) for sub in cls.__subclasses__())


def coverage(real: Any = None) -> list[Row]:
    """Rows for every public name of *real* (default: the installed ``mpi4py.MPI``).

    Raises ``ImportError`` when mpi4py is not installed and *real* is not given.
    """
    if real is None:
        import mpi4py.MPI as real  # noqa: N811 - the real module, not bsim's
    from .. import MPI as ours
    from .common.namespace import is_stand_in
    rows = []
    for name in _public(real):
        value = getattr(real, name)
        mine = getattr(ours, name, None)
        if inspect.isclass(value):
            family = NOT_SIMULATED.get(name, "not implemented yet")
            stand_in = is_stand_in(mine)
            for member in _public(value):
                key = f"{name}.{member}"
                if mine is not None and not stand_in and _has(mine, member):
                    rows.append(Row(name, member, "simulated", DIFFERENCES.get(key, "")))
                else:
                    rows.append(Row(name, member, "not simulated", family))
        elif mine is not None and not is_stand_in(mine):
            rows.append(Row("MPI", name, "simulated", DIFFERENCES.get(name, "")))
        else:
            why = NOT_SIMULATED.get(name, "not implemented yet")
            if mine is not None:
                why = "importable; using it raises NotSimulatedError"
            rows.append(Row("MPI", name, "not simulated", why))
    return rows


def summary(rows: list[Row]) -> list[tuple[str, int, int]]:
    """``(scope, simulated, total)`` per scope, module-level names first."""
    counts: dict[str, list[int]] = {}
    for r in rows:
        c = counts.setdefault(r.scope, [0, 0])
        c[0] += r.status == "simulated"
        c[1] += 1
    order = ["MPI"] + sorted(k for k in counts if k != "MPI")
    return [(k, counts[k][0], counts[k][1]) for k in order]


def markdown(rows: list[Row], version: str) -> str:
    """The ``docs/mpi_coverage.md`` page for *rows* of mpi4py *version*."""
    out = [f"# mpi4py coverage (generated against mpi4py {version})", "",
           "Generated by `python -m bsim.mpi.coverage > docs/mpi_coverage.md` from the code: "
           "every public name of `mpi4py.MPI` and of its classes, *simulated* by `bsim.MPI` "
           "or *not simulated* (with the reason). `bsim list mpi` prints the summary. Do not "
           "edit by hand.", ""]
    total = sum(s for _, s, _ in summary(rows)), len(rows)
    out += [f"**{total[0]} of {total[1]} names simulated.**", "",
            "| scope | simulated | of | not simulated because |", "|---|---|---|---|"]
    for scope, sim, tot in summary(rows):
        why = NOT_SIMULATED.get(scope, "not implemented yet" if sim < tot else "")
        out.append(f"| `{scope}` | {sim} | {tot} | {why} |")
    diffs = [r for r in rows if r.status == "simulated" and r.note]
    if diffs:
        out += ["", "## Simulated with a difference", "", "| name | difference |", "|---|---|"]
        out += [f"| `{_qual(r)}` | {r.note} |" for r in diffs]
    out += ["", "## Not simulated, by scope", ""]
    for scope, _, _ in summary(rows):
        missing = [r.name for r in rows if r.scope == scope and r.status != "simulated"]
        if missing and scope not in NOT_SIMULATED:
            out.append(f"- `{scope}`: " + ", ".join(f"`{m}`" for m in missing))
    out += _suite_section()
    out += _wild_section()
    out += _reduction_section()
    out.append("")
    return "\n".join(out)


SUITE_DATA = Path(__file__).resolve().parents[2] / "docs" / "data" / "mpi4py_suite.json"
"""The last measured run of mpi4py's test suite (``benchmarks/mpi4py_conformance.py --data``)."""


def suite_markdown(table: dict[str, Any]) -> str:
    """The per-module table of a conformance run (``benchmarks/mpi4py_conformance.py``)."""
    sims = [w for w in table["worlds"] if w.startswith("bsim")]
    real = next((w for w in table["worlds"] if w.startswith("real")), "real:2")
    head = ["module", f"real n={real.split(':')[1]}"]
    head += [f"bsim n={w.split(':')[1]}" for w in sims] + ["gap", "commonest first failure"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, key in (("**all**", "total"), ("**core**", "core")):
        c, rate = table[key], table["rate" if key == "total" else "core_rate"]
        cells = [name, str(c.get("real", 0))]
        cells += [f"{c.get(w, 0)} ({rate.get(w, 0):.1%})" for w in sims]
        out.append("| " + " | ".join(cells + ["", ""]) + " |")
    for r in table["rows"]:
        why = r["first_failure"].replace("|", "\\|")
        cells = [f"`{r['module']}`", str(r["real"])] + [str(r[w]) for w in sims]
        out.append("| " + " | ".join(cells + [str(r["gap"]), why]) + " |")
    return "\n".join(out)


def _suite_section() -> list[str]:
    if not SUITE_DATA.is_file():
        return []
    table = json.loads(SUITE_DATA.read_text(encoding="utf-8"))
    return ["", f"## mpi4py {table.get('mpi4py', '?')}'s own test suite, unmodified", "",
            "Measured by `python benchmarks/mpi4py_conformance.py --data "
            "docs/data/mpi4py_suite.json`: every module of the suite's `test/` (from the "
            "PyPI sdist) under bsim at n = 1..4 and under real `mpiexec -n 2` (MPICH). A test "
            "counts when it passes under real MPI and under bsim on every rank; the rate is "
            "over the tests that pass under real MPI. *core* = p2p, collectives, "
            "communicators, groups, requests, status, datatypes, ops, message specs. A test "
            "that deadlocks or hangs is recorded as such and the module goes on after it. "
            "n = 1 passes fewer: about 110 of these tests skip themselves below 2 ranks, "
            "under real MPI as well (measured with `--ranks 1 --real 1` on 2026-11-25: real "
            "MPICH at n = 1 passes 1,966 tests, 1,061 of them core; bsim at n = 1 passes "
            "1,956 of those, all 1,061 core). What no rank count passes needs a compiled MPI "
            "library (`test_mpiapi`, `test_package`'s libmpi loading, `test_objmodel`'s "
            "Cython API and buffer-protocol constants), Cython's signature docstrings "
            "(`test_doc`) or host time around a task (one `test_util_pool` test).",
            "", suite_markdown(table)]


WILD = Path(__file__).resolve().parents[2] / "tests" / "wild"
"""Programs from the wild (``tests/test_wild_corpus.py``)."""


def _wild_section() -> list[str]:
    programs = sorted(p.name.split("_")[0] for p in WILD.glob("*.py")
                      if not p.name.startswith("_")) if WILD.is_dir() else []
    if not programs:
        return []
    kinds = ", ".join(f"{k} {programs.count(k)}" for k in dict.fromkeys(programs))
    return ["", "## Programs from the wild, unmodified", "",
            f"`tests/wild/` holds {len(programs)} ordinary mpi4py programs written in the "
            "styles of public tutorials and courses, none taken from mpi4py's suite "
            f"(by kind: {kinds}; p2p = point-to-point, coll = collectives, comm = "
            "communicators and topologies, dt = derived datatypes, rma = one-sided, io = "
            "MPI-IO, farm = task farms, app = small applications, misc = logging, caches, "
            "pickled classes, `mpi4py.util.pkl5`). `tests/test_wild_corpus.py` runs each "
            "under real `mpiexec -n N` (MPICH, one output file per rank) and under `bsim run "
            "prog.py -n N` (`-m mpi4py.futures` where the program says so) and requires the "
            f"printed lines to be identical: {len(programs)} of {len(programs)} (100%), "
            "beside mpi4py's suite's 99.6% above. What the corpus exercises beyond the "
            "suite: imports after the first MPI call with 3 or more ranks, `random` and "
            "`numpy.random` seeded per rank, `concurrent.futures.ThreadPoolExecutor`, "
            "`python -m mpi4py.futures` with its shared pool, spinning on "
            "`Future.done()`, integral floats as ranks (`size / 2`), `Get_topo` periods as "
            "ints, a vector datatype resized for `Scatterv`. Receive blocks that overlap "
            "in a v collective are refused as erroneous (`docs/errors.md`); MPICH accepts "
            "them and writes whichever block arrives last."] + _own_section()


def _own_section() -> list[str]:
    own = sorted(WILD.glob("own/p*.py")) if WILD.is_dir() else []
    if not own:
        return []
    return ["", f"`tests/wild/own/` holds {len(own)} more such programs, each a bundle of "
            "everyday habits (pickled and buffer calls on dicts, lists and arrays of "
            "float32, int64, complex128, bool, uint8 and int8 with and without explicit "
            "datatypes, `bytearray` and `memoryview` buffers, Fortran-ordered arrays, "
            "`MAXLOC` on structured arrays, v collectives with uneven counts, task farms "
            "on `Probe`/`Iprobe`, `Waitany`/`Testsome`/`Waitsome`, persistent requests, "
            "`Cancel`, `Bsend`, node-shared windows, MPI-IO, `argparse`, per-rank files, "
            "`mpi4py.util.pkl5`, `dtlib` and `sync`, `mpi4py.rc.initialize = False` with "
            "`MPI.Init()`, `rc.thread_level`). `tests/test_wild_programs.py` compares each "
            "with real `mpiexec -n 3`, except two that differ by design: "
            "`p12_shared_split.py` counts simulated nodes with `Split_type("
            "COMM_TYPE_SHARED)` (the machine's nodes, one rank per node on a bare network "
            "model, where mpiexec here has one host) and `p27_wtime_spin.py` waits for "
            "`MPI.Wtime()` to move without any MPI call, which a simulated clock never "
            "does: bsim stops it with one line naming the rank, the call and the program's "
            "line (charge such waits with `bsim.add_time`). Handlers a rank's own code "
            "registers with `atexit.register` run when that rank's program ends, in the "
            "rank (they may still call MPI), as at a real process's exit; those the "
            "standard library or an installed package registers stay the host's. The "
            "launcher's environment variables (`PMI_RANK`, `PMI_SIZE`, "
            "`OMPI_COMM_WORLD_RANK`, ...) are not set: all ranks share the host "
            "process's `os.environ`; `COMM_WORLD.Get_rank()` and "
            "`Get_size()` give the same numbers."]


def _reduction_section() -> list[str]:
    return ["", "## Floating-point reductions and MPICH's order", "",
            "bsim combines the ranks' contributions in rank order "
            "(`op(op(x0, x1), x2)`...). Compared bit for bit with MPICH 4 (the venv's "
            "`mpich`, default algorithm selection) on random doubles of mixed magnitude, "
            "`SUM` and `PROD`, counts 1, 16, 256, 1,024 and 8,192: `Allreduce`, `Reduce`, "
            "`Scan`, `Reduce_scatter_block` and lowercase `allreduce` give identical bits "
            "at 2 and 3 ranks; from 4 ranks on MPICH associates differently (recursive "
            "doubling for short `Allreduce`, reduce-scatter plus allgather for long ones, a "
            "binomial tree for `Reduce`, recursive doubling for `Scan`, recursive halving "
            "for `Reduce_scatter`), so the last bits of floating-point results can differ "
            "(at 4, 5, 6 and 8 ranks almost every case above differed in some element). "
            "Integer reductions, `MAX`, `MIN`, `MAXLOC`, `MINLOC` and the logical and "
            "bitwise operations are exact and identical. The timing is not affected."]


def _qual(r: Row) -> str:
    return r.name if r.scope == "MPI" else f"{r.scope}.{r.name}"


def main() -> int:
    """Print the coverage page (mpi4py must be installed)."""
    import mpi4py
    sys.stdout.write(markdown(coverage(), mpi4py.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
