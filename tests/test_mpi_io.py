"""MPI-IO (``MPI.File``): data read back as under real MPI, errors, and the cost model's times."""

from __future__ import annotations

import os
import tempfile

import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from netmodels.filesystem import Lustre, build_filesystem
from netmodels.spec import SpecError


def _tmp(prefix: str) -> str:
    """A new empty temporary file's name (its descriptor closed)."""
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name

PROGRAM = '''
import os
import tempfile

import numpy as np
from mpi4py import MPI


def _tmp(prefix):
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name


def main():
    comm = MPI.COMM_WORLD
    n, r = comm.Get_size(), comm.Get_rank()
    name = comm.bcast(_tmp("bsim-io-") if r == 0 else None)
    amode = MPI.MODE_RDWR | MPI.MODE_CREATE | MPI.MODE_DELETE_ON_CLOSE
    fh = MPI.File.Open(comm, name, amode, MPI.INFO_NULL)
    out = {"amode": fh.Get_amode() == amode, "group": fh.Get_group().Get_size()}
    I = MPI.INT
    # explicit offsets, independent
    fh.Set_view(0, I, I, "native")
    fh.Write_at(4 * r, np.arange(4, dtype="i") + 10 * r)
    fh.Sync(); comm.Barrier(); fh.Sync()
    whole = np.full(4 * n + 2, -1, dtype="i")
    st = MPI.Status()
    fh.Read_at(0, whole, st)
    out["read_at"] = whole.tolist()
    out["count"] = st.Get_count(I)
    out["size"] = fh.Get_size()
    comm.Barrier()
    # interleaved view: rank r owns every n-th int from int r on
    ftype = I.Create_resized(0, 4 * n).Commit()
    fh.Set_size(0)
    fh.Set_view(4 * r, I, ftype)
    fh.Write_all(np.arange(3, dtype="i") + 100 * r)
    out["byte_offset"] = fh.Get_byte_offset(2)
    out["position"] = fh.Get_position()
    fh.Sync(); comm.Barrier(); fh.Sync()
    fh.Set_view(0, I)
    back = np.zeros(3 * n, dtype="i")
    fh.Read_at_all(0, back)
    out["interleaved"] = back.tolist()
    ftype.Free()
    # subarray filetype, nonblocking collective and split collective
    sub = I.Create_subarray([2 * n, 3], [2, 3], [2 * r, 0]).Commit()
    fh.Set_size(0)
    fh.Set_view(0, I, sub)
    fh.Iwrite_all(np.full(6, r + 1, dtype="i")).Wait()
    fh.Sync(); comm.Barrier(); fh.Sync()
    fh.Set_view(0, I, I)
    grid = np.zeros(6 * n, dtype="i")
    fh.Read_all_begin(grid)
    fh.Read_all_end(grid)
    out["subarray"] = grid.tolist()
    sub.Free()
    # shared file pointer: ordered writes, then a seek and shared reads
    fh.Set_size(0)
    fh.Seek_shared(0, MPI.SEEK_SET)
    fh.Write_ordered(np.full(r + 1, 7 + r, dtype="i"))
    out["shared_after"] = fh.Get_position_shared()
    fh.Sync(); comm.Barrier(); fh.Sync()
    fh.Seek_shared(0)
    mine = np.zeros(r + 1, dtype="i")
    fh.Read_ordered(mine)
    out["ordered"] = mine.tolist()
    # the individual pointer, SEEK_END, a short read at the end of the file
    fh.Seek(-1, MPI.SEEK_END)
    out["seek_end"] = fh.Get_position()
    tail = np.full(5, -1, dtype="i")
    req = fh.Iread(tail)
    st2 = MPI.Status()
    req.Wait(st2)
    out["tail"] = tail.tolist()
    out["tail_count"] = st2.Get_count(I)
    out["extent"] = fh.Get_type_extent(MPI.DOUBLE)
    fh.Set_view(0, I)
    fh.Seek(0)
    own = fh.Iwrite_at(0, np.zeros(0, dtype="i"))
    own.Wait()
    if r == 0:
        fh.Iwrite(np.arange(3, dtype="i")).Wait()
    out["iwrite_position"] = fh.Get_position()
    fh.Close()
    out["closed"] = fh == MPI.FILE_NULL
    # errors: their classes
    errs = {}
    missing = name + "-missing"
    for label, mode in (("missing", MPI.MODE_RDONLY), ("amode", MPI.MODE_RDONLY | MPI.MODE_CREATE),
                        ("two_modes", MPI.MODE_RDWR | MPI.MODE_WRONLY)):
        try:
            MPI.File.Open(MPI.COMM_SELF, missing, mode).Close()
            errs[label] = None
        except MPI.Exception as exc:
            errs[label] = exc.Get_error_class()
    out["errors"] = errs
    out["classes"] = [MPI.ERR_NO_SUCH_FILE, MPI.ERR_AMODE]
    return out
'''


def _bsim(n: int) -> list:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], n, protocol="bsim").returns


@pytest.mark.parametrize("n", [1, 2, 3])
def test_file_data_by_hand(n):
    """What each rank reads back, derived from what the ranks wrote."""
    for r, out in enumerate(_bsim(n)):
        assert out["amode"] and out["group"] == n
        assert out["read_at"] == [10 * q + i for q in range(n) for i in range(4)] + [-1, -1]
        assert out["count"] == 4 * n and out["size"] == 16 * n
        # int k of rank r's view is file int r + k n: byte 4 (r + 2 n)
        assert out["byte_offset"] == 4 * (r + 2 * n) and out["position"] == 3
        assert out["interleaved"] == [100 * q + k for k in range(3) for q in range(n)]
        assert out["subarray"] == [q + 1 for q in range(n) for _ in range(6)]
        assert out["shared_after"] == n * (n + 1) // 2
        assert out["ordered"] == [7 + r] * (r + 1)
        size = n * (n + 1) // 2                     # ints in the file
        assert out["seek_end"] == size - 1
        assert out["tail"] == [7 + n - 1] + [-1] * 4 and out["tail_count"] == 1
        assert out["extent"] == 8 and out["closed"]
        assert out["iwrite_position"] == (3 if r == 0 else 0)
        assert out["errors"] == {"missing": out["classes"][0], "amode": out["classes"][1],
                                 "two_modes": out["classes"][1]}


@needs_mpiexec
@pytest.mark.parametrize("n", [2, 3])
def test_file_data_equal_real_mpi(n):
    assert real_mpi_returns(n, PROGRAM) == _bsim(n)


FS = ("lustre:latency=1e-4,metadata=1e-3,stripe_count=2,stripe_size=1000,"
      "ost_bandwidth=1e9,client_bandwidth=2e9,aggregate_bandwidth=1e12")


def test_times_by_hand():
    """Open, an independent write, a collective write, an overlapped Iwrite_at, Close."""
    def main():

        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        name = comm.bcast(_tmp("bsim-io-t-") if r == 0 else None)
        fh = MPI.File.Open(comm, name, MPI.MODE_WRONLY | MPI.MODE_DELETE_ON_CLOSE)
        if r == 0:
            fh.Write_at(0, np.zeros(3000, "B"))
        fh.Write_at_all(1000 * (1 - r), np.zeros(1000, "B"))   # each the other's stripe
        req = fh.Iwrite_at(4000 + 1000 * r, np.zeros(1000, "B"))
        bsim.add_time(1e-3)
        req.Wait()
        fh.Close()

    res = bsim.simulate(main, 2, network="hockney:latency=1e-6,bandwidth=1e9",
                        collectives="clog:c=1e-5,d=0", filesystem=FS, protocol="bsim")
    # The bcast of the name: 2 x 1e-5 (clog: c for every collective; a lowercase bcast is
    # two, as mpi4py's: the pickle's length, then the pickle).
    # Open: barrier 1e-5 + metadata 1e-3.  Rank 0's Write_at of bytes 0..3000: stripes
    # 0, 1, 2 on OSTs 0, 1, 0 -> 2000 bytes on OST 0: 1e-4 + max(2e-6, 3000/2e9) = 1.02e-4.
    # Write_at_all: barrier after the later arrival (rank 0 at 1.122e-3) 1e-5, the
    # exchange: two aggregators (ranks 0 and 1, stripe k to aggregator k mod 2), rank 0's
    # 1000 bytes (stripe 1) to rank 1 and rank 1's (stripe 0) to rank 0: each receives
    # and sends 1000 bytes, 1e-6 + 1e-6; then the aggregators over two OSTs with 1000
    # bytes each: 1e-4 + max(1e-6, 2000/4e9) = 1.01e-4.  Iwrite_at: 1.01e-4 < the 1e-3 of
    # add_time: Wait costs nothing.  Close: barrier 1e-5 + metadata 1e-3.
    t_open = 2e-5 + 1e-5 + 1e-3
    t_coll = t_open + 1.02e-4 + 1e-5 + 2e-6 + 1.01e-4
    finish = t_coll + 1e-3 + 1e-5 + 1e-3
    assert res.finish.tolist() == pytest.approx([finish, finish], rel=1e-12)
    assert res.wait.tolist() == pytest.approx([0.0, 1.02e-4], rel=1e-9)
    assert res.calc.tolist() == [1e-3, 1e-3]
    assert res.filesystem == build_filesystem(FS).spec()
    assert res.to_dict()["filesystem"].startswith("lustre:latency=0.0001,metadata=0.001,")


def test_ost_bytes_by_hand():
    fs = Lustre(stripe_count=3, stripe_size=10)
    # bytes 5..45: stripe 0 (5 bytes, OST 0), 1, 2, 3 (OSTs 1, 2, 0), stripe 4 (5 bytes, OST 1)
    assert fs.ost_bytes([(5, 40)]) == (40, 15)
    assert fs.ost_bytes([(0, 10), (30, 10), (60, 5)]) == (25, 25)   # stripes 0, 3, 6: OST 0
    assert fs.independent([]) == 0.0
    assert fs.aggregator_count(8) == 3 and Lustre(aggregators=16).aggregator_count(4) == 4


def test_bad_file_system_specs_are_one_line():
    with pytest.raises(SpecError, match="unknown file system model 'gpfs'"):
        build_filesystem("gpfs")
    with pytest.raises(SpecError, match="stripe_count must be > 0"):
        build_filesystem("lustre:stripe_count=0")
    with pytest.raises(SpecError, match="unknown parameter"):
        build_filesystem("lustre:stripes=4")


def test_runs_without_files_record_no_file_system():
    def main():
        from mpi4py import MPI
        MPI.COMM_WORLD.Barrier()
    assert "filesystem" not in bsim.simulate(main, 2, protocol="bsim").to_dict()


@pytest.mark.parametrize("body,match", [
    ("fh.Read_at(0, np.zeros(4, 'B'))", r"rank 0: File.Read_at: the file was opened "
                                        r"MODE_WRONLY"),
    ("fh.Set_view(0, MPI.INT, MPI.INT, 'external32')", "external32' is not simulated"),
    ("fh.Write_at(-1, np.zeros(4, 'B'))", "offset must be an int >= 0"),
    ("fh.Set_view(0, MPI.DOUBLE, MPI.INT)", "not a whole number of (MPI_)?DOUBLE etypes"),
    ("fh.Read_all_end(np.zeros(4, 'B'))", "Read_all_end without a matching"),
    ("fh.Close(); fh.Get_size()", "File.Get_size on FILE_NULL"),
    ("fh.Set_view(0, MPI.BYTE, MPI.BYTE.Create_vector(2, 1, 2).Commit()); "
     "fh.Write(bsim.buffer(10**8))", r"rank 0: File.Write: an access of 100,000,000 bytes "
                                     r"through filetype .* touches more than 10,000,000"),
])
def test_bad_calls_are_one_line(body, match, tmp_path):
    code = ("def main():\n    import numpy as np\n    import bsim\n"
            "    from mpi4py import MPI\n"
            "    name = _tmp()\n"
            "    fh = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_WRONLY | "
            "MPI.MODE_DELETE_ON_CLOSE)\n"
            f"    {body}\n")
    path = tmp_path / "f"
    path.touch()
    namespace: dict = {"_tmp": lambda: str(path)}
    exec(compile(code, "<program>", "exec"), namespace)
    with pytest.raises(bsim.MPIUsageError, match=match):
        bsim.simulate(namespace["main"], 1, protocol="bsim")


ERRHANDLERS = '''
import os
import tempfile

from mpi4py import MPI


def _tmp(prefix):
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name


def main():
    name = _tmp("bsim-io-eh-")
    MPI.FILE_NULL.Set_errhandler(MPI.ERRORS_ARE_FATAL)
    fh = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_RDWR | MPI.MODE_DELETE_ON_CLOSE)
    inherited = fh.Get_errhandler() == MPI.ERRORS_RETURN   # mpi4py sets it on new files
    fh.Set_errhandler(MPI.ERRORS_RETURN)
    own = fh.Get_errhandler() == MPI.ERRORS_RETURN
    fh.Close()
    closed = fh.Get_errhandler() == MPI.ERRORS_ARE_FATAL   # the handle is FILE_NULL now
    MPI.FILE_NULL.Set_errhandler(MPI.ERRORS_RETURN)
    return [inherited, own, closed]
'''


def test_file_error_handlers_follow_file_null():
    """A new file gets ERRORS_RETURN (mpi4py sets it); a closed handle is FILE_NULL."""
    namespace: dict = {}
    exec(compile(ERRHANDLERS, "<program>", "exec"), namespace)
    assert bsim.simulate(namespace["main"], 2, protocol="bsim").returns == [[True, True, True]] * 2


@needs_mpiexec
def test_file_error_handlers_equal_real_mpi():
    namespace: dict = {}
    exec(compile(ERRHANDLERS, "<program>", "exec"), namespace)
    assert real_mpi_returns(2, ERRHANDLERS) == bsim.simulate(namespace["main"], 2,
                                                             protocol="bsim").returns


def test_handles_round_trip_and_free_closes():
    def main():

        from mpi4py import MPI
        name = _tmp("bsim-io-h-")
        fh = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_RDWR | MPI.MODE_DELETE_ON_CLOSE)
        same = MPI.File.fromhandle(fh.handle) == fh and MPI.File.f2py(fh.py2f()) == fh
        copy = MPI.File(fh)
        fh.free()
        return [same, not copy, copy == MPI.FILE_NULL, MPI.File.fromint(0) == MPI.FILE_NULL,
                MPI.FILE_NULL.handle]
    assert bsim.simulate(main, 2, protocol="bsim").returns == [[True, True, True, True, 0]] * 2


DATAREP = '''
import os
import tempfile

import numpy as np
from mpi4py import MPI


def _tmp(prefix):
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name


def main():
    out = []
    MPI.Register_datarep("bsim-test-rep", None, None, lambda dt: 2 * dt.extent)
    for name in ("bsim-test-rep", "native"):
        try:
            MPI.Register_datarep(name, None, None, lambda dt: dt.extent)
        except MPI.Exception as exc:
            out.append(exc.Get_error_class() == MPI.ERR_DUP_DATAREP)
    fname = _tmp("bsim-io-rep-")
    fh = MPI.File.Open(MPI.COMM_SELF, fname, MPI.MODE_RDWR | MPI.MODE_DELETE_ON_CLOSE)
    try:
        fh.Set_view(0, MPI.INT, MPI.INT, "bsim-test-rep")
    except MPI.Exception as exc:
        out.append(exc.Get_error_class() == MPI.ERR_UNSUPPORTED_DATAREP)
    out.append(fh.Get_view()[3])
    out.append(fh.Get_type_extent(MPI.INT))
    fh.Close()
    return out
'''


def test_registered_datarep_with_null_conversions():
    """Names are checked for duplicates; views cannot use them (as MPICH's ROMIO)."""
    namespace: dict = {}
    exec(compile(DATAREP, "<program>", "exec"), namespace)
    want = [True, True, "native", 4]   # "native" registers again (as in MPICH)
    assert bsim.simulate(namespace["main"], 2, protocol="bsim").returns == [want] * 2


@needs_mpiexec
def test_registered_datarep_equals_real_mpi():
    namespace: dict = {}
    exec(compile(DATAREP, "<program>", "exec"), namespace)
    assert real_mpi_returns(2, DATAREP) == bsim.simulate(namespace["main"], 2,
                                                         protocol="bsim").returns


@pytest.mark.parametrize("stripes,aggregate,late", [(1, 1e12, 2e-6), (2, 1e12, 0.0),
                                                    (2, 1e9, 2e-6)])
def test_independent_writes_queue_on_a_shared_ost(stripes, aggregate, late):
    """Two ranks write 2000 bytes each at the same time: on one OST (1e9 B/s) the second
    (rank 1: ties go to the lower rank) waits for the first's 2 us; striped over two OSTs
    in 2000-byte stripes they do not meet, unless the file system's aggregate link
    (1e9 B/s) is what they share."""
    def main():

        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        name = comm.bcast(_tmp("bsim-io-q-") if r == 0 else None)
        fh = MPI.File.Open(comm, name, MPI.MODE_WRONLY | MPI.MODE_DELETE_ON_CLOSE)
        t0 = MPI.Wtime()
        fh.Write_at(2000 * r, np.zeros(2000, "B"))
        t1 = MPI.Wtime()
        fh.Close()
        return t1 - t0

    fs = (f"lustre:latency=1e-4,stripe_count={stripes},stripe_size=2000,ost_bandwidth=1e9,"
          f"client_bandwidth=2e9,aggregate_bandwidth={aggregate}")
    res = bsim.simulate(main, 2, filesystem=fs, protocol="bsim")
    assert res.returns == pytest.approx([1e-4 + 2e-6, 1e-4 + 2e-6 + late], rel=1e-9)


ERRORS = '''
import os
import tempfile

import numpy as np
from mpi4py import MPI


def _tmp(prefix):
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name
def main():
    out = {}
    name = _tmp("bsim-io-x-")
    fh = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_WRONLY)
    def attempt(label, fn):
        try:
            fn(); out[label] = None
        except MPI.Exception as e:
            out[label] = e.Get_error_class()
        except Exception as e:
            out[label] = type(e).__name__
    attempt("read_wronly", lambda: fh.Read_at(0, np.zeros(4, 'B')))
    attempt("bad_view", lambda: fh.Set_view(0, MPI.DOUBLE, MPI.INT))
    attempt("neg_offset", lambda: fh.Write_at(-1, np.zeros(4, 'B')))
    attempt("seek_whence", lambda: fh.Seek(0, 12345))
    attempt("seek_neg", lambda: fh.Seek(-5, MPI.SEEK_SET))
    attempt("set_size_neg", lambda: fh.Set_size(-1))
    attempt("partial_etype", lambda: (fh.Set_view(0, MPI.INT), fh.Write_at(0, np.zeros(3, 'B'))))
    fh.Close()
    fh = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_RDONLY | MPI.MODE_DELETE_ON_CLOSE)
    attempt("write_rdonly", lambda: fh.Write_at(0, np.zeros(4, 'B')))
    attempt("setsize_rdonly", lambda: fh.Set_size(10))
    fh.Close()
    attempt("closed", lambda: fh.Get_size())
    attempt("delete_missing", lambda: MPI.File.Delete(name + "-nope"))
    excl = MPI.MODE_RDWR | MPI.MODE_CREATE | MPI.MODE_EXCL
    attempt("excl", lambda: MPI.File.Open(MPI.COMM_SELF, tempfile.gettempdir(), excl))
    return out
'''


def test_error_classes_by_hand():
    """Each erroneous call raises MPI.Exception with MPICH's class (values of bsim.MPI)."""
    namespace: dict = {}
    exec(compile(ERRORS, "<program>", "exec"), namespace)
    M = bsim.MPI
    assert bsim.simulate(namespace["main"], 1, protocol="bsim").returns[0] == {
        "read_wronly": M.ERR_ACCESS, "bad_view": M.ERR_ARG, "neg_offset": M.ERR_ARG,
        "seek_whence": M.ERR_ARG, "seek_neg": M.ERR_ARG, "set_size_neg": M.ERR_ARG,
        "partial_etype": M.ERR_IO, "write_rdonly": M.ERR_READ_ONLY,
        "setsize_rdonly": M.ERR_READ_ONLY, "closed": M.ERR_FILE,
        "delete_missing": M.ERR_NO_SUCH_FILE, "excl": M.ERR_FILE_EXISTS}


@needs_mpiexec
def test_error_classes_equal_real_mpi():
    namespace: dict = {}
    exec(compile(ERRORS, "<program>", "exec"), namespace)
    assert real_mpi_returns(1, ERRORS) == bsim.simulate(namespace["main"], 1,
                                                        protocol="bsim").returns


def test_a_machine_file_sets_the_file_system(tmp_path):
    """``[filesystem]`` of a machine file is the run's model unless filesystem= is given."""
    toml = tmp_path / "m.toml"
    toml.write_text('name = "m"\ndescription = "d"\nsource = "s"\ncores_per_node = 1\n'
                    '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n'
                    '[filesystem]\nmodel = "lustre"\nstripe_count = 4\n')

    def main():
        from mpi4py import MPI
        MPI.COMM_WORLD.Barrier()

    res = bsim.simulate(main, 2, machine=str(toml), protocol="bsim")
    assert res.filesystem == build_filesystem("lustre:stripe_count=4").spec()
    res = bsim.simulate(main, 2, machine=str(toml), filesystem="lustre:stripe_count=2",
                        protocol="bsim")
    assert "stripe_count=2," in res.filesystem
    toml.write_text(toml.read_text().replace("stripe_count = 4", "stripes = 4"))
    from bsim.machines import MachineError, load_machine
    with pytest.raises(MachineError, match=r"\[filesystem\].*unknown parameter\(s\) stripes"):
        load_machine(str(toml))


def test_one_ranks_nonblocking_writes_share_its_client_link():
    """Two Iwrite_at of 2000 bytes to two OSTs at once: the OSTs work in parallel, but
    the rank's client link (1e9 B/s) carries one after the other: 2 us, then 4 us."""
    def main():
        import numpy as np
        from mpi4py import MPI
        fh = MPI.File.Open(MPI.COMM_SELF, _tmp("bsim-io-c-"),
                           MPI.MODE_WRONLY | MPI.MODE_DELETE_ON_CLOSE)
        t0 = MPI.Wtime()
        reqs = [fh.Iwrite_at(2000 * k, np.zeros(2000, "B")) for k in range(2)]
        reqs[0].Wait()
        t1 = MPI.Wtime()
        reqs[1].Wait()
        t2 = MPI.Wtime()
        fh.Close()
        return [t1 - t0, t2 - t0]

    fs = "lustre:latency=1e-4,stripe_count=2,stripe_size=2000,ost_bandwidth=1e9," \
         "client_bandwidth=1e9"
    assert bsim.simulate(main, 1, filesystem=fs, protocol="bsim").returns[0] == \
        pytest.approx([1e-4 + 2e-6, 1e-4 + 4e-6], rel=1e-9)


FILE_OPS = '''
import os, tempfile
import numpy as np
from mpi4py import MPI

def _tmp(prefix):
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name

def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    out = {}
    name = comm.bcast(_tmp("bsim-io-ops-") if r == 0 else None)
    fh = MPI.File.Open(comm, name, MPI.MODE_RDWR)
    fh.Write_at_all(10 * r, np.full(10, r + 1, 'B'))
    fh.Sync(); comm.Barrier(); fh.Sync()
    out["size"] = fh.Get_size()
    fh.Close()
    fh = MPI.File.Open(comm, name, MPI.MODE_RDWR | MPI.MODE_APPEND)
    out["append_pos"] = fh.Get_position()
    out["append_shared"] = fh.Get_position_shared()
    vec = MPI.INT.Create_vector(2, 1, 3).Commit()
    fh.Set_view(4, MPI.INT, vec)
    out["view_after"] = [fh.Get_position(), fh.Get_position_shared()]
    out["byte_offsets"] = [fh.Get_byte_offset(k) for k in range(5)]
    fh.Seek(0, MPI.SEEK_END)
    out["seek_end_vec"] = fh.Get_position()
    fh.Seek(3, MPI.SEEK_SET); fh.Seek(2, MPI.SEEK_CUR)
    out["seek_cur"] = fh.Get_position()
    fh.Set_view(0, MPI.BYTE, MPI.BYTE)
    fh.Preallocate(5)
    out["prealloc_small"] = fh.Get_size()
    fh.Preallocate(100)
    out["prealloc"] = fh.Get_size()
    fh.Set_size(7)
    out["set_size"] = fh.Get_size()
    rb = np.full(10, 9, 'B')
    st = MPI.Status()
    fh.Read_at_all(5, rb, st)
    out["read_short"] = [rb.tolist(), st.Get_count(), st.Get_count(MPI.INT),
                         st.Get_elements(MPI.BYTE)]
    info = fh.Get_info()
    out["info_type"] = type(info).__name__
    info.Free()
    d, et, ft, rep = fh.Get_view()
    out["view"] = [d, et.Get_size(), ft.Get_size(), rep]
    fh.Set_atomicity(True)
    out["atom"] = fh.Get_atomicity()
    out["group"] = [fh.group_size, fh.group_rank]
    fh.Close()
    MPI.File.Delete(name) if r == 0 else None
    comm.Barrier()
    return out
'''


@pytest.mark.parametrize("n", [2, 3])
def test_file_operations_by_hand(n):
    """Sizes, MODE_APPEND, a vector view's byte offsets and SEEK_END, resizing, a short
    collective read and its counts."""
    namespace: dict = {}
    exec(compile(FILE_OPS, "<program>", "exec"), namespace)
    for r, out in enumerate(bsim.simulate(namespace["main"], n, protocol="bsim").returns):
        assert out["size"] == 10 * n and out["append_pos"] == out["append_shared"] == 10 * n
        assert out["view_after"] == [0, 0]
        # vector(2, 1, 3) of ints: bytes 0 and 12 of a 16-byte tile, from byte 4
        assert out["byte_offsets"] == [4, 16, 20, 32, 36]
        # the view's data in a 10 n-byte file: whole tiles of 8 data bytes, then the rest
        rel = 10 * n - 4
        inside = min(rel % 16, 4) + min(max(rel % 16 - 12, 0), 4)
        assert out["seek_end_vec"] == -(-(rel // 16 * 8 + inside) // 4)
        assert out["seek_cur"] == 5
        assert out["prealloc_small"] == 10 * n and out["prealloc"] == 100
        assert out["set_size"] == 7
        # bytes 5, 6 of a 7-byte file: rank 0's 1s; 2 bytes are not a whole int
        assert out["read_short"] == [[1, 1] + [9] * 8, 2, bsim.MPI.UNDEFINED, 2]
        assert out["view"] == [0, 1, 1, "native"] and out["atom"]
        assert out["group"] == [n, r]


@needs_mpiexec
@pytest.mark.parametrize("n", [2, 3])
def test_file_operations_equal_real_mpi(n):
    namespace: dict = {}
    exec(compile(FILE_OPS, "<program>", "exec"), namespace)
    assert real_mpi_returns(n, FILE_OPS) == bsim.simulate(namespace["main"], n,
                                                          protocol="bsim").returns


MORE_ERRORS = '''
import os, tempfile
import numpy as np
from mpi4py import MPI

def _tmp(prefix):
    fd, name = tempfile.mkstemp(prefix=prefix)
    os.close(fd)
    return name

def main():
    out = {}
    def attempt(label, fn):
        try:
            fn(); out[label] = None
        except (TypeError, BufferError) as e:
            out[label] = [c.__name__ for c in (TypeError, BufferError) if isinstance(e, c)][0]
        except MPI.Exception as e:
            out[label] = e.Get_error_class()
    name = _tmp("bsim-io-m-")
    fh = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_RDWR)
    attempt("readonly_buf", lambda: fh.Read_at(0, b"abcd"))
    attempt("bad_status", lambda: fh.Read_at(0, np.zeros(1, 'B'), 5))
    one = np.zeros(1, 'B')
    attempt("split_twice", lambda: (fh.Read_all_begin(one), fh.Read_all_begin(one)))
    attempt("split_end", lambda: fh.Read_all_end(np.zeros(1, 'B')))
    attempt("end_wrong", lambda: fh.Write_all_end(np.zeros(1, 'B')))
    attempt("neg_disp", lambda: fh.Set_view(-3, MPI.BYTE, MPI.BYTE))
    attempt("bad_rep", lambda: fh.Set_view(0, MPI.BYTE, MPI.BYTE, "nosuch"))
    attempt("bad_info", lambda: fh.Set_info(5))
    fh.Close()
    attempt("comm_null", lambda: MPI.File.Open(MPI.COMM_NULL, name, MPI.MODE_RDWR))
    attempt("bad_name", lambda: MPI.File.Open(MPI.COMM_SELF, 12, MPI.MODE_RDWR))
    seq = MPI.MODE_WRONLY | MPI.MODE_SEQUENTIAL | MPI.MODE_DELETE_ON_CLOSE
    fh = MPI.File.Open(MPI.COMM_SELF, name, seq)
    attempt("seq_write_at", lambda: fh.Write_at(0, np.zeros(1, 'B')))
    attempt("seq_seek", lambda: fh.Seek(0))
    attempt("seq_position", lambda: fh.Get_position())
    attempt("seq_write_all", lambda: fh.Write_all(np.zeros(1, 'B')))
    attempt("seq_write_shared", lambda: fh.Write_shared(np.zeros(3, 'B')))
    current = MPI.DISPLACEMENT_CURRENT
    attempt("seq_disp_current", lambda: fh.Set_view(current, MPI.BYTE, MPI.BYTE))
    out["seq_view"] = fh.Get_view()[0]
    fh.Close()
    return out
'''


def test_more_errors_by_hand():
    """Split-collective misuse (ERR_IO, as MPICH), MODE_SEQUENTIAL's forbidden pointers
    (ERR_UNSUPPORTED_OPERATION), and the exception types mpi4py raises."""
    namespace: dict = {}
    exec(compile(MORE_ERRORS, "<program>", "exec"), namespace)
    M = bsim.MPI
    assert bsim.simulate(namespace["main"], 1, protocol="bsim").returns[0] == {
        "readonly_buf": "BufferError", "bad_status": "TypeError", "split_twice": M.ERR_IO,
        "split_end": None, "end_wrong": M.ERR_IO, "neg_disp": M.ERR_ARG,
        "bad_rep": M.ERR_UNSUPPORTED_DATAREP, "bad_info": "TypeError",
        "comm_null": "TypeError", "bad_name": "TypeError",
        "seq_write_at": M.ERR_UNSUPPORTED_OPERATION, "seq_seek": M.ERR_UNSUPPORTED_OPERATION,
        "seq_position": M.ERR_UNSUPPORTED_OPERATION,
        "seq_write_all": M.ERR_UNSUPPORTED_OPERATION, "seq_write_shared": None,
        "seq_disp_current": None, "seq_view": 3}


@needs_mpiexec
def test_more_errors_equal_real_mpi():
    namespace: dict = {}
    exec(compile(MORE_ERRORS, "<program>", "exec"), namespace)
    assert real_mpi_returns(1, MORE_ERRORS) == bsim.simulate(namespace["main"], 1,
                                                             protocol="bsim").returns
