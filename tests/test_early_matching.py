"""Early matching: a blocking receive takes a message still in flight when the match is
already decided, and the prediction is bit for bit the one of matching at visibility.

``bsim.engine.matching.early_matching`` argues it: a receive from one named source takes
that source's first matching message in send order (MPI's non-overtaking rule) unless a
receive posted before it takes the message, and under ``bsim`` without contention the
receive ends at ``max(tp, ts) + cost`` whenever it matches.  Checked here against the
engine with early matching switched off (``Engine.start`` asks ``core.early_matching``),
where every match happens when the message becomes visible: random SPMD programs of
blocking and nonblocking point-to-point calls (several messages on one tag, a wildcard
receive posted first, synchronous sends, ``ANY_TAG``, probes, pickled objects), with the
data received checked against the order MPI prescribes, worked out by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import greenlet
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bsim
import bsim.engine.core as core
from bsim.engine.compiled import compiled_modules
from bsim.engine.matching import may_match_early
from bsim.engine.rank import RankGreenlet
from bsim.outputs.trace import ChromeTracer

NET = "hockney:latency=1e-6,bandwidth=1e9"
KINDS = ("sendrecv", "isend_recv", "several", "wildcard_first", "issend", "any_tag", "probe",
         "objects", "sendrecv_objects")


@contextmanager
def _matching(early: bool) -> Iterator[None]:
    """Early matching on (where the run allows it, compiled or not: as Python the engine
    leaves it off for speed, ``matching.early_matching``) or off."""
    rule = may_match_early if early else (lambda engine: False)
    with mock.patch.object(core, "early_matching", rule):
        yield


def _value(src: int, step: int, i: int) -> int:
    return src * 1_000_000 + step * 100 + i


def _program(steps: list[tuple[str, int, int, int]], seed: int) -> list[int]:
    """Every rank runs *steps* in turn; returns the values it received, in order."""
    from bsim import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    got: list[int] = []
    for s, (kind, shift, tag, count) in enumerate(steps):
        # imbalance, in steps finer than the lookahead (1 us): a message may be in flight
        # or visible when its receive is posted
        bsim.add_time(1e-7 * ((rank * 7 + s * 3 + seed) % 23))
        dst, src = (rank + shift) % size, (rank - shift) % size
        n = 1 + count   # elements of a message: sizes differ between steps
        buf = np.zeros(n, dtype=np.int64)

        def data(i: int, step: int = s, n: int = n) -> np.ndarray:
            return np.full(n, _value(rank, step, i), dtype=np.int64)

        if kind == "sendrecv":
            comm.Sendrecv(data(0), dest=dst, sendtag=tag, recvbuf=buf, source=src,
                          recvtag=tag)
            got.append(int(buf[0]))
        elif kind == "isend_recv":
            req = comm.Isend(data(0), dest=dst, tag=tag)
            comm.Recv(buf, source=src, tag=tag)
            req.Wait()
            got.append(int(buf[0]))
        elif kind == "several":   # count messages on one tag: received in send order
            for i in range(count):
                comm.Send(data(i), dest=dst, tag=tag)
            for _ in range(count):
                comm.Recv(buf, source=src, tag=tag)
                got.append(int(buf[0]))
        elif kind == "wildcard_first":   # the wildcard, posted first, takes the first
            # on a tag of this step alone: on a shared tag, a later step's message from
            # another rank may reach the wildcard first (a race MPI leaves to the program:
            # found as a truncation, with either matching, for 6 ranks and shifts 1,3,3,3,2)
            wtag = 4 + s
            first = np.zeros(n, dtype=np.int64)
            req = comm.Irecv(first, source=MPI.ANY_SOURCE, tag=wtag)
            comm.Send(data(0), dest=dst, tag=wtag)
            comm.Send(data(1), dest=dst, tag=wtag)
            comm.Recv(buf, source=src, tag=wtag)
            req.Wait()
            got.extend([int(first[0]), int(buf[0])])
        elif kind == "issend":   # synchronous: completes once the receive matched
            req = comm.Issend(data(0), dest=dst, tag=tag)
            comm.Recv(buf, source=src, tag=tag)
            req.Wait()
            got.append(int(buf[0]))
        elif kind == "any_tag":
            comm.Send(data(0), dest=dst, tag=tag)
            status = MPI.Status()
            comm.Recv(buf, source=src, tag=MPI.ANY_TAG, status=status)
            got.extend([int(buf[0]), status.Get_tag()])
        elif kind == "objects":   # pickled, several on one tag
            for i in range(count):
                comm.send((_value(rank, s, i), "x" * count), dest=dst, tag=tag)
            got.extend(comm.recv(source=src, tag=tag)[0] for _ in range(count))
        elif kind == "sendrecv_objects":
            got.append(comm.sendrecv(_value(rank, s, 0), dest=dst, sendtag=tag, source=src,
                                     recvtag=tag))
        else:   # probe, then the receive of what it found
            comm.Send(data(0), dest=dst, tag=tag)
            comm.Probe(source=src, tag=tag)
            comm.Recv(buf, source=src, tag=tag)
            got.append(int(buf[0]))
    comm.Barrier()
    return got


def _expected(steps: list[tuple[str, int, int, int]], rank: int, size: int) -> list[int]:
    """What MPI's matching rules give *rank*, worked out by hand."""
    want: list[int] = []
    for s, (kind, shift, tag, count) in enumerate(steps):
        src = (rank - shift) % size
        if kind in ("several", "objects"):
            want.extend(_value(src, s, i) for i in range(count))
        elif kind == "wildcard_first":   # the only sender to this rank is src
            want.extend([_value(src, s, 0), _value(src, s, 1)])
        elif kind == "any_tag":
            want.extend([_value(src, s, 0), tag])
        else:
            want.append(_value(src, s, 0))
    return want


def _run(program: Callable[..., Any], ranks: int, early: bool,
         **kwargs: Any) -> tuple[Any, int]:
    """The result of a run and how many times a rank was switched into."""
    switches = [0]

    def trace(event: str, args: tuple) -> None:
        if event == "switch" and isinstance(args[1], RankGreenlet):
            switches[0] += 1

    old = greenlet.settrace(trace)
    try:
        with _matching(early):
            res = bsim.simulate(program, ranks=ranks, network=NET, protocol="bsim",
                                contention="none", check_memory=False, kwargs=kwargs)
    finally:
        greenlet.settrace(old)
    return res, switches[0]


def _same_prediction(a: Any, b: Any) -> None:
    for name in ("finish", "calc", "wait", "comm", "ops", "messages", "bytes"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.elapsed == b.elapsed
    assert a.returns == b.returns


steps_st = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(1, 5), st.integers(0, 3),
                              st.integers(1, 3)), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(steps=steps_st, ranks=st.integers(2, 6), seed=st.integers(0, 4))
def test_early_matching_predicts_what_matching_at_visibility_does(
        steps: list[tuple[str, int, int, int]], ranks: int, seed: int) -> None:
    steps = [(k, shift % ranks or 1, tag, count) for k, shift, tag, count in steps]
    early, _ = _run(_program, ranks, True, steps=steps, seed=seed)
    late, _ = _run(_program, ranks, False, steps=steps, seed=seed)
    _same_prediction(early, late)
    for rank in range(ranks):
        assert early.returns[rank] == _expected(steps, rank, ranks)


def _ring(iterations: int) -> None:
    from bsim import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    buf = bsim.Buffer(64)
    for _ in range(iterations):
        comm.Sendrecv(buf, dest=(rank + 1) % size, recvbuf=bsim.Buffer(64),
                      source=(rank - 1) % size, recvtag=0)
        comm.Sendrecv(buf, dest=(rank - 1) % size, recvbuf=bsim.Buffer(64),
                      source=(rank + 1) % size, recvtag=0)
        bsim.add_time(1e-5)


def test_the_compiled_hot_path_matches_early() -> None:
    engine = core.Engine(2)
    engine.protocol = type("P", (), {"exact_bsim": True, "fabric": None})()
    # compiled, on where the run allows it; as Python, off (its cost, early_matching)
    assert core.early_matching(engine) is ("bsim.engine.matching" in compiled_modules())
    assert may_match_early(engine)


def test_a_receive_of_a_message_in_flight_does_not_wait_for_it() -> None:
    # 16 ranks in step: at each Sendrecv, every rank but the first finds its left
    # neighbour's message sent (the ranks run in rank order at equal times)
    early, n_early = _run(_ring, 16, True, iterations=4)
    late, n_late = _run(_ring, 16, False, iterations=4)
    _same_prediction(early, late)
    assert n_early < n_late
    assert early.events < late.events   # the wake-ups spared


def test_the_run_that_may_match_early(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def spy(engine: Any) -> bool:
        seen.append(may_match_early(engine))
        return seen[-1]

    monkeypatch.setattr(core, "early_matching", spy)
    for protocol, contention in (("bsim", "none"), ("bsim", "fluid"), ("loggp", "none")):
        bsim.simulate(_ring, ranks=4, network=NET, protocol=protocol, contention=contention,
                      check_memory=False, kwargs={"iterations": 1})
    bsim.simulate(_ring, ranks=4, network=NET, protocol="bsim", check_memory=False,
                  tracer=ChromeTracer(), kwargs={"iterations": 1})
    # only bsim without contention and untraced (docstring of early_matching)
    assert seen == [True, False, False, False]


def _in_flight_order(wildcard_first: bool) -> list[int]:
    """Rank 0 sends three messages on one tag at t = 0; rank 1, at t = 0 too (it runs
    after rank 0), receives them with blocking receives while all three are in flight;
    with *wildcard_first* it has posted a wildcard receive before, which takes the first."""
    from bsim import MPI
    comm = MPI.COMM_WORLD
    buf = np.zeros(1, dtype=np.int64)
    if comm.Get_rank() == 0:
        for i in range(3):
            comm.Send(np.full(1, 10 + i, dtype=np.int64), dest=1, tag=5)
        return []
    got = []
    if wildcard_first:
        first = np.zeros(1, dtype=np.int64)
        req = comm.Irecv(first, source=MPI.ANY_SOURCE, tag=5)
    for _ in range(2 if wildcard_first else 3):
        comm.Recv(buf, source=0, tag=5)
        got.append(int(buf[0]))
    if wildcard_first:
        req.Wait()
        got.insert(0, int(first[0]))
    return got


@pytest.mark.parametrize("wildcard_first", [False, True], ids=["recv", "wildcard-first"])
def test_messages_in_flight_are_taken_in_send_order(wildcard_first: bool) -> None:
    early, n_early = _run(_in_flight_order, 2, True, wildcard_first=wildcard_first)
    late, n_late = _run(_in_flight_order, 2, False, wildcard_first=wildcard_first)
    _same_prediction(early, late)
    assert early.returns[1] == [10, 11, 12]   # MPI's non-overtaking order
    # rank 1 switched into once (its start) when its receives took the messages in
    # flight; without early matching it waits for the first to become visible
    assert (n_early, n_late) == ((2, 3) if not wildcard_first else (3, 3))
