"""The rest of the datatype API: decoding, packing, handles, as mpi4py 4.1.2 on MPICH has it.

One program asks every constructor for its envelope, contents, ``decode()``, bounds and
typecodes, packs arrays with ``Pack`` and ``Pack_external`` (``external32``: big-endian,
``LONG`` in 4 bytes, ``LONG_DOUBLE`` as an IEEE quad) and exercises the handle object
model; it runs under real ``mpiexec`` and under bsim and the answers must be equal.  The
hand-checked cases below say what the answers are (MPI 4.1 sections 5.1.13, 5.2, 14.5.2).
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from bsim import MPI

PROGRAM = '''
import pickle
import numpy as np
from mpi4py import MPI


def describe(t):
    ni, na, nc, nd, combiner = t.Get_envelope()
    out = {"envelope": [ni, na, nc, nd, combiner], "size": t.size, "extent": t.Get_extent(),
           "true": t.Get_true_extent(), "typechar": t.typechar, "typestr": t.typestr,
           "named": t.is_named, "predefined": t.is_predefined}
    if combiner != MPI.COMBINER_NAMED:
        i, a, c, d = t.Get_contents()
        out["contents"] = [i, a, c, [x.Get_name() for x in d]]
        base, name, params = t.decode()
        params.pop("datatypes", None)
        out["decode"] = [base.Get_name(), name, {k: (v.Get_name() if isinstance(v, MPI.Datatype)
                                                       else v) for k, v in params.items()}]
        again = pickle.loads(pickle.dumps(t))
        out["pickled"] = again.Get_envelope() == t.Get_envelope() and again.size == t.size
    return out


def main():
    I, D = MPI.INT, MPI.DOUBLE
    kinds = {
        "dup": I.Dup(), "contiguous": I.Create_contiguous(3), "vector": I.Create_vector(2, 3, 4),
        "hvector": D.Create_hvector(2, 1, 24), "indexed": I.Create_indexed([1, 2], [0, 5]),
        "hindexed": I.Create_hindexed([1, 2], [0, 20]),
        "indexed_block": I.Create_indexed_block(2, [0, 5]),
        "hindexed_block": I.Create_hindexed_block(2, [0, 20]),
        "struct": MPI.Datatype.Create_struct([1, 2], [0, 8], [I, D]),
        "subarray": I.Create_subarray([4, 5], [2, 3], [1, 1], MPI.ORDER_FORTRAN),
        "darray": D.Create_darray(4, 1, [8, 6], [MPI.DISTRIBUTE_BLOCK, MPI.DISTRIBUTE_CYCLIC],
                                  [MPI.DISTRIBUTE_DFLT_DARG, 2], [2, 2]),
        "resized": I.Create_resized(-4, 12),
        "f90_integer": MPI.Datatype.Create_f90_integer(4),
        "f90_real": MPI.Datatype.Create_f90_real(15, 300),
        "f90_complex": MPI.Datatype.Create_f90_complex(6, 30),
        "named": MPI.SHORT_INT, "pair": MPI.Datatype.Get_value_index(MPI.LONG, MPI.INT),
        "match": MPI.Datatype.Match_size(MPI.TYPECLASS_REAL, 8),
    }
    out = {name: describe(t) for name, t in kinds.items()}
    out["pair_is_long_int"] = kinds["pair"] == MPI.LONG_INT
    out["no_pair"] = MPI.Datatype.Get_value_index(MPI.DOUBLE, MPI.SHORT) == MPI.DATATYPE_NULL
    out["names"] = [t.Get_name() for t in (MPI.INT_INT, MPI.LONG_LONG, MPI.FLOAT16_T,
                                           MPI.DATATYPE_NULL, MPI.BFLOAT16_T, kinds["dup"])]
    # packing
    ints = np.arange(1, 5, dtype="i")
    packed = bytearray(20)
    end = MPI.INT.Pack(ints, packed, 2, MPI.COMM_SELF)
    back = np.zeros(4, dtype="i")
    MPI.INT.Unpack(packed, 2, back, MPI.COMM_SELF)
    vec = MPI.SHORT.Create_vector(2, 1, 2).Commit()
    ext = {}
    for name, t, data in [("int", MPI.INT, ints), ("long", MPI.LONG, np.array([-5, 2**33 + 7])),
                          ("double", MPI.DOUBLE, np.array([1.5, -2.0])),
                          ("long_double", MPI.LONG_DOUBLE, np.array([1.5, -3.25], dtype="g")),
                          ("bool", MPI.C_BOOL, np.array([True, False])),
                          ("complex", MPI.C_COMPLEX, np.array([1 + 2j], dtype="F")),
                          ("vector", vec, np.arange(8, dtype="h"))]:
        buf = bytearray(t.Pack_external_size("external32", len(data) // (2 if t is vec else 1)))
        pos = t.Pack_external("external32", data, buf, 0)
        again = np.full_like(data, -1)
        t.Unpack_external("external32", buf, 0, again)
        ext[name] = [pos, bytes(buf).hex(), bool((again == data).all())]
    out["pack"] = [end, bytes(packed).hex(), back.tolist(), MPI.DOUBLE.Pack_size(3, MPI.COMM_SELF),
                   MPI.LONG.Pack_external_size("external32", 3), ext]
    # handles
    copy = MPI.Datatype(MPI.INT)
    dup = MPI.INT.Dup()
    dup.Free()
    out["handles"] = [copy == MPI.INT, copy is not MPI.INT, MPI.Datatype() == MPI.DATATYPE_NULL,
                      bool(MPI.DATATYPE_NULL), dup == MPI.DATATYPE_NULL,
                      MPI.Datatype.fromhandle(MPI.DOUBLE.handle) == MPI.DOUBLE,
                      MPI.Datatype.f2py(MPI.FLOAT.py2f()) == MPI.FLOAT,
                      pickle.loads(pickle.dumps(MPI.INT)) is MPI.INT,
                      MPI.Intracomm.fromhandle(MPI.COMM_WORLD.handle) == MPI.COMM_WORLD,
                      MPI.Op.fromint(MPI.SUM.toint()) == MPI.SUM,
                      MPI.Status.f2py([0, 0, 3, 4, 0]).Get_source(), MPI._sizeof(MPI.Status),
                      MPI._sizeof(MPI.COMM_WORLD)]
    return out
'''


def _bsim() -> list:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return json.loads(json.dumps(bsim.simulate(namespace["main"], 2).returns))  # as real's


@needs_mpiexec
def test_datatype_api_equals_real_mpi():
    """Envelopes, contents, bounds, typecodes, packed bytes and handles are MPICH's."""
    assert real_mpi_returns(2, PROGRAM) == _bsim()


def test_envelopes_and_packing_by_hand():
    """The recorded constructor arguments and the external32 bytes, derived by hand."""
    out = _bsim()[0]
    # vector(2, 3, 4) of INT: large counts [count, blocklength, stride]; elements 0-2 and
    # 4-6 -> size 24, extent (2 - 1) * 16 + 12 = 28
    assert out["vector"]["envelope"] == [0, 0, 3, 1, MPI.COMBINER_VECTOR]
    assert out["vector"]["contents"] == [[], [], [2, 3, 4], ["MPI_INT"]]
    assert out["vector"]["size"] == 24 and out["vector"]["extent"] == [0, 28]
    # subarray: integers [ndims, order], large counts sizes + subsizes + starts
    assert out["subarray"]["contents"][:3] == [[2, MPI.ORDER_FORTRAN], [], [4, 5, 2, 3, 1, 1]]
    # darray on a 2 x 2 grid, rank 1 = coordinates (0, 1): rows 0-3 (block of 4), columns
    # in cyclic pairs 2-3 of 6 -> 4 x 2 doubles; extent the whole 8 x 6 array
    assert out["darray"]["size"] == 64 and out["darray"]["extent"] == [0, 384]
    assert out["f90_real"]["typestr"] == "f8" and out["f90_real"]["predefined"]
    assert out["pair_is_long_int"] and out["no_pair"]
    end, packed, back, pack_size, ext_long, ext = out["pack"]
    assert end == 18 and packed[4:20] == "0100000002000000" and back == [1, 2, 3, 4]
    assert pack_size == 24 and ext_long == 12   # external32 LONG is 4 bytes
    assert ext["long"][1] == "fffffffb00000007"            # -5, and 2**33 + 7 mod 2**32
    assert ext["double"][1] == "3ff8000000000000c000000000000000"
    assert ext["long_double"][1][:32] == "3fff8000000000000000000000000000"   # 1.5 in quad
    # vector(2, 1, 2) of SHORT: extent 6 bytes, so 16 bytes hold 2 elements (at shorts 0
    # and 3), each shorts +0 and +2 -> 0 2 3 5; 16 bytes asked for 4 elements
    assert ext["vector"][:2] == [8, "00000002000300050000000000000000"]
    # unpacked back unchanged, but for what 4 bytes cannot hold (2**33 + 7 comes back as 7)
    assert all(ext[k][2] for k in ext if k not in ("vector", "long"))


def test_handle_object_model():
    """mpi4py's rules: copies are equal, Free nulls one handle, handles are unhashable."""
    copy = MPI.Datatype(MPI.INT)
    assert copy == MPI.INT and copy is not MPI.INT and MPI.Datatype() == MPI.DATATYPE_NULL
    with pytest.raises(TypeError):
        MPI.Datatype((1, 2, 3))
    with pytest.raises(TypeError):
        hash(MPI.INT)
    assert MPI.FLOAT32_T is MPI.FLOAT and MPI.BFLOAT16_T == MPI.DATATYPE_NULL
    copy.free()                    # a non-constant handle of a predefined type: nulled
    assert not copy and MPI.INT
    MPI.INT.free()                 # the module's constant: left alone
    assert MPI.INT
    assert pickle.loads(pickle.dumps(MPI.Datatype(MPI.INT))) == MPI.INT

    class MyRequest(MPI.Request):
        def __new__(cls, request=None):
            return super().__new__(cls, request)

        def test(self):   # a lowercase override must not change Test
            return super(type(self), self).Test()

    req = MyRequest(MPI.REQUEST_NULL)
    assert type(req) is MyRequest and req == MPI.REQUEST_NULL and req.test()
    status = MPI.Status()
    status.source, status.tag = 1, 2
    assert MPI.Status.f2py(status.py2f()) == status
    assert pickle.loads(pickle.dumps(status)) == status


def test_bad_datatype_calls_are_one_clear_error():
    """Null handles and impossible requests raise MPI.Exception naming the call."""
    with pytest.raises(MPI.Exception, match="Get_envelope: invalid datatype DATATYPE_NULL") as e:
        MPI.DATATYPE_NULL.Get_envelope()
    assert e.value.Get_error_class() == MPI.ERR_TYPE
    with pytest.raises(MPI.Exception, match="is a named datatype"):
        MPI.INT.Get_contents()
    with pytest.raises(MPI.Exception, match="cannot free the predefined INT"):
        MPI.INT.Free()
    with pytest.raises(MPI.Exception, match="do not fit in an output buffer of 8 bytes"):
        MPI.INT.Pack(np.arange(4, dtype="i"), bytearray(8), 0, MPI.COMM_SELF)
    with pytest.raises(MPI.Exception, match="only 'external32'"):
        MPI.INT.Pack_external_size("native", 1)
    with pytest.raises(MPI.Exception, match="no external32 representation"):
        MPI.FLOAT16_T.Pack_external_size("external32", 1)
