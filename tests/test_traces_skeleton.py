"""The skeleton generator: loop folding, rank arithmetic, and generated skeletons that
reproduce the replay of their trace and run at four times its ranks."""

from __future__ import annotations

import importlib.util

import pytest

import bsim
from bsim.traces import Trace, replay
from bsim.traces.patterns import order_expression, partition_expression, peer_expression
from bsim.traces.skeleton import Loop, fold, write_skeleton

HOCKNEY = "hockney:latency=1e-06,bandwidth=1000000000.0"


def _flat(tree):
    out = []
    for item in tree:
        out += _flat(item.body) * item.count if isinstance(item, Loop) else [item]
    return out


def test_fold_finds_loops_and_nests():
    """a (b c)x3 d, and (x (y)x2)x2: the folded tree expands to the input."""
    toks = list("abcbcbcd")
    tree = fold(toks)
    assert tree[0] == "a" and tree[2] == "d"
    assert isinstance(tree[1], Loop) and tree[1].count == 3 and tree[1].body == ["b", "c"]
    nested = list("xyyxyy")
    t2 = fold(nested)
    assert len(t2) == 1 and t2[0].count == 2
    assert t2[0].body[0] == "x" and t2[0].body[1].count == 2
    assert _flat(tree) == toks and _flat(t2) == nested


@pytest.mark.parametrize("values, size, px, want", [
    ({r: (r + 1) % 6 for r in range(6)}, 6, 2, "(rank + 1) % size"),
    ({r: (r - 1) % 6 for r in range(6)}, 6, 2, "(rank - 1) % size"),
    ({r: r ^ 2 for r in range(8)}, 8, 2, "rank ^ 2"),
    # a 2 x 3 grid (PX = 2): east neighbour, periodic in x: 0->1, 1->0, 2->3, ...
    ({r: (r % 2 + 1) % 2 + (r // 2) * 2 for r in range(6)}, 6, 2, "cart(rank, size, 1, 0)"),
    ({r: 0 for r in range(4)}, 4, 2, "0"),
    ({r: 3 for r in range(4)}, 4, 2, "size - 1"),
    ({r: (r - 1) // 2 for r in range(1, 7)}, 7, 1, "(rank - 1) // 2"),
    ({0: 3, 1: 0, 2: 0, 3: 1}, 4, 2, None),
])
def test_peer_expressions(values, size, px, want):
    """Hand cases for each family, and an irregular one."""
    assert peer_expression(values, size, px) == want


def test_half_ring_shift_is_send_plus_receive_minus():
    """On 2 ranks +1 and -1 are one shift: sends get +1, receives -1, so they pair."""
    two = {0: 1, 1: 0}
    assert peer_expression(two, 2, 1) == "(rank + 1) % size"
    assert peer_expression(two, 2, 1, receive=True) == "(rank - 1) % size"


def test_split_colour_and_key():
    """Rows and columns of a 2 x 3 grid; keys in rank order."""
    rows = {r: r // 3 for r in range(6)}
    assert partition_expression(rows, 6) == "rank // 3"
    cols = {r: 10 + r % 3 for r in range(6)}       # any labels: the same parts
    assert partition_expression(cols, 6) == "rank % 3"
    assert order_expression({r: r // 3 for r in range(6)}, cols, 6) == "rank"


def _halo_trace(px: int, py: int, iters: int) -> Trace:
    """A periodic 2-D halo exchange (east/west/north/south) with an allreduce, compute
    varying by rank and iteration."""
    n = px * py
    ranks = []
    for r in range(n):
        x, y = r % px, r // px
        nb = [(x + 1) % px + y * px, (x - 1) % px + y * px, x + ((y + 1) % py) * px,
              x + ((y - 1) % py) * px]
        acts = []
        for it in range(iters):
            q = 0
            for k in range(4):
                acts.append(("irecv", 0, nb[k ^ 1], k, 800, 8 * it + k))
            for k in range(4):
                acts.append(("isend", 0, nb[k], k, 800, 8 * it + 4 + k))
            acts.append(("compute", 1e-4 * (1 + 0.01 * ((r + it) % 3))))
            acts.append(("wait", tuple(8 * it + j for j in range(8))))
            acts.append(("allreduce", 0, 8))
            q += 1
        ranks.append(acts)
    return Trace(ranks, "synthetic")


def _run(path, ranks):
    spec = importlib.util.spec_from_file_location("skel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return bsim.simulate(mod.main, ranks, network=HOCKNEY, protocol="bsim")


def test_halo_skeleton_reproduces_replay_and_scales(tmp_path):
    """2 x 3 grid, 6 iterations: one loop, Cartesian neighbours, the replay's time at 6
    ranks (recorded series) and within 1% with the means; it runs on 24 ranks."""
    trace = _halo_trace(2, 3, 6)
    out = tmp_path / "halo_skel.py"
    info = write_skeleton(trace, out)
    text = out.read_text()
    assert info["loops"] == 1 and not info["irregular"]
    assert "cart(r0, n0, 1, 0)" in text and "for _ in range(6):" in text
    want = replay(trace, network=HOCKNEY, protocol="bsim").elapsed
    assert _run(out, 6).elapsed == pytest.approx(want, rel=1e-9)
    assert _run(out, 24).elapsed > 0


def test_split_in_a_program_with_several_groups_keeps_its_parts(tmp_path):
    """Rank 0 sends to rank 1 first (so ranks 0, 1 and {2, 3} run different code), then
    all split into {0, 2} and {1, 3} and allreduce there after unequal compute: the
    skeleton must make the same two communicators (each group's colours are the recorded
    ones, not labels of its own that collide with another group's)."""
    ranks = []
    for r in range(4):
        acts = [("send", 0, 1, 5, 64)] if r == 0 else [("recv", 0, 0, 5, 64)] if r == 1 \
            else []
        acts += [("split", 0, 2, r % 2, r // 2), ("compute", 1e-3 * (r + 1)),
                 ("allreduce", 2, 8), ("compute", 1e-4)]
        ranks.append(acts)
    trace = Trace(ranks, "synthetic")
    out = tmp_path / "groups_skel.py"
    info = write_skeleton(trace, out)
    assert info["groups"] == 3
    want = replay(trace, network=HOCKNEY, protocol="bsim")
    got = _run(out, 4)
    assert list(got.finish) == pytest.approx(list(want.finish), rel=1e-12)


def test_split_that_leaves_ranks_out(tmp_path):
    """Ranks 0 and 1 make a communicator that rank 2 is left out of (MPI_Comm_create or a
    split with MPI_UNDEFINED: recorded as colour -1, no new id): the skeleton runs and
    reproduces the replay (it wrote 'c-1 = ...', a syntax error, before)."""
    ranks = []
    for r in range(3):
        inside = r < 2
        acts = [("split", 0, 2 if inside else -1, 0 if inside else -1, r if inside else -1),
                ("compute", 1e-3 * (r + 1))]
        if inside:
            acts += [("allreduce", 2, 800), ("compute", 2e-4)]
        acts += [("allreduce", 0, 8), ("compute", 1e-4)]
        ranks.append(acts)
    trace = Trace(ranks, "synthetic")
    out = tmp_path / "left_out_skel.py"
    write_skeleton(trace, out)
    compile(out.read_text(), str(out), "exec")
    want = replay(trace, network=HOCKNEY, protocol="bsim")
    got = _run(out, 3)
    assert list(got.finish) == pytest.approx(list(want.finish), rel=1e-12)
    assert _run(out, 12).ranks == 12
