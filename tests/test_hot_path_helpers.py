"""The hot path's small helpers against their plain definitions.

``settle`` orders a call's requests with an insertion sort on C doubles
(``bsim.engine.rank._by_avail``); it must give exactly ``sorted(key=avail, None last)``,
stable.  The event loop orders the messages that become visible at one time by key with
a check and an insertion sort on C integers (``bsim.engine.matching.order_by_key``); it
must give ``sorted(key=key)``; it orders the wake-ups of one time, ``(key, rank)`` pairs,
with a natural merge sort of their runs in C (``order_wakeups``), which must give
``list.sort``'s order, and leave what it cannot sort in C (keys beyond a C integer,
equal keys) to ``list.sort``.  ``active`` checks a list completed together for a repeated
request pairwise when it is short and with a set when it is long; both must find a repeat
anywhere, and a non-request anywhere.  The protocol computes Hockney's cost itself
(``ProtocolState.net_cost``); it must be ``Hockney.cost``'s float, and a subclass's own.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bsim
from bsim import MPI
from bsim.engine.matching import Message, order_by_key, order_wakeups
from bsim.engine.protocols import build_protocol
from bsim.engine.rank import _by_avail
from bsim.engine.request_state import RequestState
from bsim.errors import MPIUsageError
from netmodels.flat import Hockney

AVAILS = st.one_of(st.none(), st.sampled_from([0.0, 1e-6, 2e-6, 1.0]),
                   st.floats(min_value=0.0, max_value=10.0, allow_nan=False))


@given(st.lists(AVAILS, max_size=40))
def test_by_avail_is_a_stable_sort_with_unresolved_last(avails: list[float | None]) -> None:
    reqs = []
    for a in avails:
        r = RequestState()
        r.avail = a
        reqs.append(r)
    expected = [r for _, r in sorted(enumerate(reqs), key=lambda p: (
        math.inf if p[1].avail is None else p[1].avail, p[0]))]
    got = _by_avail(list(reqs))
    assert [id(r) for r in got] == [id(r) for r in expected]


@given(st.lists(st.integers(-1, 1 << 62), max_size=70, unique=True), st.booleans())
def test_order_by_key_sorts_a_batch_by_key(keys: list[int], presorted: bool) -> None:
    # short and long lists, in order already (the usual case) or not
    msgs = []
    for k in sorted(keys) if presorted else keys:
        m = Message(0, 0, 1, 0, 0, 8, None, False)
        m.key = k
        msgs.append(m)
    batch = list(msgs)
    order_by_key(batch)
    assert [id(m) for m in batch] == [id(m) for m in sorted(msgs, key=lambda m: m.key)]


@given(st.lists(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=12),
                max_size=40))
def test_order_wakeups_sorts_runs_of_keys(runs: list[list[int]]) -> None:
    # a batch as it comes: ascending runs (ranks woken in the order their last message
    # arrived), of any lengths and keys, the keys distinct; the ranks are not comparable
    seen: set[int] = set()
    keys = []
    for run in runs:
        fresh = sorted(set(run) - seen)
        seen.update(fresh)
        keys += fresh
    batch = [(k, object()) for k in keys]
    expected = sorted(batch, key=lambda p: p[0])
    order_wakeups(batch)
    assert [id(p) for p in batch] == [id(p) for p in expected]


@pytest.mark.parametrize("keys", [[3, 1 << 70, 2, -(1 << 64)], [5, 2, 2, 1], [2, 2]])
def test_order_wakeups_leaves_the_rest_to_list_sort(keys: list[int]) -> None:
    # keys beyond a C long long, equal keys (the second items decide, as list.sort has it)
    batch = [(k, -i) for i, k in enumerate(keys)]
    expected = sorted(batch)
    order_wakeups(batch)
    assert batch == expected


@pytest.mark.parametrize("n, first, second", [(3, 0, 2), (16, 5, 15), (17, 0, 16),
                                              (40, 39, 12), (40, 3, 4)])
def test_a_repeat_is_found_in_short_and_long_lists(n: int, first: int, second: int) -> None:
    def main() -> None:
        comm = MPI.COMM_WORLD
        reqs = [comm.Isend(bsim.Buffer(8), dest=0, tag=t) for t in range(n)]
        done = list(reqs)
        reqs[second] = reqs[first]
        try:
            MPI.Request.Waitall(reqs)
        finally:
            for _ in range(n):
                comm.Recv(bsim.Buffer(8), source=0)
            MPI.Request.Waitall(done)

    with pytest.raises(MPIUsageError, match="rank 0: Waitall: a request appears twice"):
        bsim.simulate(main, 1)


@pytest.mark.parametrize("n", [2, 30])
def test_no_repeat_no_error(n: int) -> None:
    def main() -> None:
        comm = MPI.COMM_WORLD
        reqs = [comm.Isend(bsim.Buffer(8), dest=0, tag=t) for t in range(n)]
        reqs += [comm.Irecv(bsim.Buffer(8), source=0, tag=t) for t in range(n)]
        MPI.Request.Waitall(reqs)

    assert bsim.simulate(main, 1).total_ops == 2 * n + 1   # every call, Waitall once


@pytest.mark.parametrize("bad", [0, 3, 20])
def test_a_non_request_is_named_by_its_index(bad: int) -> None:
    def main() -> None:
        comm = MPI.COMM_WORLD
        reqs: list[object] = [MPI.REQUEST_NULL] * 21
        reqs[bad] = "x"
        reqs[1] = comm.Isend(bsim.Buffer(8), dest=0)
        try:
            MPI.Request.Waitall(reqs)
        finally:
            comm.Recv(bsim.Buffer(8), source=0)

    with pytest.raises(MPIUsageError, match=rf"rank 0: Waitall: requests\[{bad}\] is 'x', "
                                            r"not a Request") as caught:
        bsim.simulate(main, 1)
    assert caught.value.__suppress_context__   # no AttributeError shown behind it


@given(st.floats(min_value=0.0, max_value=1e-3, allow_nan=False),
       st.floats(min_value=1e3, max_value=1e12, allow_nan=False),
       st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=3),
       st.integers(min_value=0, max_value=2 ** 62))
def test_net_cost_is_hockneys_to_the_last_bit(latency: float, bandwidth: float, src: int,
                                             dst: int, nbytes: int) -> None:
    # the protocol computes Hockney's cost itself (in C when compiled): the same float
    net = Hockney(latency=latency, bandwidth=bandwidth)
    proto = build_protocol("bsim")
    proto.use_network(net)
    assert proto.hockney
    got, want = proto.net_cost(src, dst, nbytes), net.cost(src, dst, nbytes)
    assert got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def test_a_hockney_subclass_keeps_its_own_cost() -> None:
    class Doubled(Hockney):
        def cost(self, src: int, dst: int, nbytes: int) -> float:
            return 2 * super().cost(src, dst, nbytes)

    proto = build_protocol("bsim")
    proto.use_network(Doubled(latency=1e-6, bandwidth=1e9))
    assert not proto.hockney
    assert proto.net_cost(0, 1, 1000) == 2 * (1e-6 + 1000 / 1e9)
    res = bsim.simulate(_ping, 2, network=Doubled(latency=1e-6, bandwidth=1e9),
                        protocol="bsim")
    assert res.elapsed == pytest.approx(2 * (1e-6 + 8 / 1e9), rel=1e-12)


def _ping() -> None:
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        comm.Send(bsim.Buffer(8), dest=1)
    else:
        comm.Recv(bsim.Buffer(8), source=0)
