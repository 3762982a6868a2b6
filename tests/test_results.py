"""Result: accounting invariant, determinism, JSON/CSV output written atomically."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.outputs.files import atomic_write_text


def mixed_program(seed: int = 3):
    """Imbalanced compute, wildcard receives, nonblocking exchange: exercises all paths."""
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    rng = np.random.default_rng(seed + r)
    for it in range(5):
        bsim.add_time(float(rng.uniform(0, 1e-4)))
        reqs = [comm.Irecv(bsim.Buffer(512), source=(r - 1) % n, tag=it),
                comm.Isend(bsim.Buffer(512), dest=(r + 1) % n, tag=it)]
        MPI.Request.Waitall(reqs)
        if r == 0:
            for _ in range(n - 1):
                comm.recv(source=MPI.ANY_SOURCE, tag=100)
        else:
            comm.send(it, dest=0, tag=100)


@pytest.mark.parametrize("protocol", ["bsim", "loggp", "loggp:eager_limit=256"])
def test_finish_is_calc_plus_wait_plus_comm(protocol):
    """The accounting invariant holds per rank to 1e-9 relative."""
    net = "loggp:L=3e-6,o=1e-6,g=2e-6,G=1e-9" if "loggp" in protocol else "hockney"
    res = bsim.simulate(mixed_program, ranks=8, network=net, protocol=protocol)
    total = res.calc + res.wait + res.comm
    assert np.allclose(res.finish, total, rtol=1e-9, atol=0)
    assert res.elapsed == res.finish.max() > 0


def test_two_runs_give_identical_json_apart_from_host(tmp_path):
    """Determinism: same program and inputs, identical JSON except the host section."""
    docs = []
    for k in range(2):
        res = bsim.simulate(mixed_program, ranks=6, network="hockney", protocol="loggp")
        path = res.to_json(tmp_path / f"r{k}.json")
        doc = json.loads(path.read_text())
        doc.pop("host")
        docs.append(doc)
    assert docs[0] == docs[1]


def test_json_round_trip_and_csv_rows(tmp_path):
    """to_json/from_json preserve every float exactly; CSV has one row per rank."""
    res = bsim.simulate(mixed_program, ranks=4)
    back = bsim.Result.from_json(res.to_json(tmp_path / "out.json"))
    for field in ("finish", "calc", "wait", "comm", "ops", "messages", "bytes"):
        assert getattr(back, field).tolist() == getattr(res, field).tolist(), field
    assert back.elapsed == res.elapsed and back.total_ops == res.total_ops
    rows = (tmp_path / "o.csv").write_text("") or res.to_csv(tmp_path / "o.csv").read_text()
    lines = rows.strip().splitlines()
    assert lines[0] == "rank,finish,calc,wait,comm,ops,messages,bytes"
    assert len(lines) == 5
    assert float(lines[1].split(",")[1]) == res.finish[0]


def test_summary_mentions_elapsed_and_breakdown():
    """summary() shows the elapsed time and the calc/wait/comm lines."""
    text = bsim.simulate(mixed_program, ranks=2).summary()
    for word in ("elapsed", "calc", "wait", "comm", "ops/s"):
        assert word in text


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    """If the rename fails the previous file is intact and no temporary file remains."""
    target = tmp_path / "result.json"
    target.write_text("old")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_atomic_write_gives_ordinary_permissions(tmp_path):
    """Files are created with 0666 & ~umask, not mkstemp's 0600."""
    mask = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "r.json", "{}")
    finally:
        os.umask(mask)
    assert (path.stat().st_mode & 0o777) == 0o644


def test_to_dataframe_one_row_per_rank_with_what_shaped_it():
    """Ring of 4 on Hockney: per-rank columns equal the arrays; attrs carry the models."""
    pd = pytest.importorskip("pandas")

    def ring():
        comm = bsim.MPI.COMM_WORLD
        bsim.add_time(1e-3 * (comm.rank + 1))
        comm.Sendrecv(bsim.Buffer(1000), dest=(comm.rank + 1) % 4,
                      recvbuf=bsim.Buffer(1000), source=(comm.rank - 1) % 4)

    res = bsim.simulate(ring, 4, network="hockney:latency=2e-6,bandwidth=1e9",
                        machine=None, name="ring")
    df = res.to_dataframe()
    assert isinstance(df, pd.DataFrame) and df.index.name == "rank" and len(df) == 4
    assert list(df.columns) == ["finish", "calc", "wait", "comm", "ops", "messages", "bytes"]
    assert df["calc"].tolist() == [1e-3, 2e-3, 3e-3, 4e-3]
    assert ((df["finish"] - (df["calc"] + df["wait"] + df["comm"])).abs() < 1e-15).all()
    assert df.attrs["network"] == res.network and df.attrs["program"] == "ring"
    assert df.attrs["elapsed"] == res.elapsed
    assert res._repr_html_().startswith("<pre>bsim prediction: ring on 4 ranks")


def test_api_runs_record_their_arguments_and_shared_modules(tmp_path):
    """simulate() without params records the program's keyword and positional arguments
    (non-scalars by type), and private_modules=False as modules = "shared": both shape
    the prediction, so two runs differing in them are told apart by bsim compare."""
    import numpy as np

    from bsim.outputs.compare import compare

    def main(n, scale=1.0, data=None):
        bsim.add_time(n * scale * 1e-6)

    a = bsim.simulate(main, 2, kwargs={"n": 10})
    b = bsim.simulate(main, 2, args=(90,), kwargs={"data": np.zeros(3)}, private_modules=False)
    assert a.params == {"n": 10}
    assert b.params == {"args": [90], "data": "<ndarray>"}
    assert a.modules == "" and b.modules == "shared"
    back = bsim.Result.from_json(b.to_json(tmp_path / "b.json"))
    assert back.modules == "shared" and back.params == b.params
    assert "modules" not in a.to_dict()
    text = compare(a, b)
    assert "params differ" in text and "modules differ: none -> shared" in text
    assert bsim.simulate(main, 2, kwargs={"n": 10}, params={"size": "small"}).params == \
        {"size": "small"}


def test_a_machine_file_is_recorded_with_its_path(tmp_path):
    """Two machine files of one name (two profiles calibrated on one host) are told apart:
    a user's file is recorded as 'name (path)', a bundled preset by its name alone."""
    from bsim.machines import MACHINE_DIR

    def main():
        bsim.add_time(1e-6)

    text = (MACHINE_DIR / "es40.toml").read_text()
    one, two = tmp_path / "a.toml", tmp_path / "b.toml"
    one.write_text(text)
    two.write_text(text)
    ra = bsim.simulate(main, 2, machine=str(one))
    rb = bsim.simulate(main, 2, machine=str(two))
    assert ra.machine == f"es40 ({one})" and rb.machine == f"es40 ({two})"
    assert bsim.simulate(main, 2, machine="es40").machine == "es40"
    from bsim.outputs.compare import compare
    assert "machine differ" in compare(ra, rb)
