"""``simulate(main, args=..., kwargs=...)`` calls ``main`` with exactly those arguments
(written out as a plain call, ``bsim/simulate.py``), and keeps a suspended rank's saved
stack small."""

from __future__ import annotations

from typing import Any

import bsim
from bsim import MPI
from bsim.simulate import _plain_call


def test_arguments_reach_the_program() -> None:
    def main(a: Any, b: Any = 0, *, key: Any = None, **rest: Any) -> Any:
        return (MPI.COMM_WORLD.rank, a, b, key, rest)

    res = bsim.simulate(main, 2, args=([1], "x"), kwargs={"key": {"k": 1}, "other": 2})
    assert res.returns == [(r, [1], "x", {"k": 1}, {"other": 2}) for r in range(2)]
    # the very objects, not copies
    obj = object()
    assert bsim.simulate(lambda o: o, 1, args=(obj,)).returns[0] is obj


def test_keys_that_are_not_identifiers_still_work() -> None:
    program = _plain_call(lambda **kw: kw, (), {"not an identifier": 1})
    assert program(None) == {"not an identifier": 1}
    assert _plain_call(lambda *a, **k: (a, k), (1, 2), {"main": 3})(None) == ((1, 2),
                                                                            {"main": 3})
