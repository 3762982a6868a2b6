"""The call an error names when the call itself is compiled (``failures.called_from``).

A compiled function has no Python frame, so the frame that asks for the call's name may be a
helper the call used (``on_null``); the name is then read from the user's source, the call
expression the user's frame is executing.
"""

from __future__ import annotations

import sys

import pytest

from bsim.engine.failures import _callee_written


def _named() -> str:
    """The name the caller of the function that called this one wrote for its call, read
    while that call runs (as an error raised inside a call reads it)."""
    return _callee_written(sys._getframe(2))


class _Comm:
    def Barrier(self, *args: object, **kwargs: object) -> str:
        return _named()


def Allreduce(*args: object, **kwargs: object) -> str:
    return _named()


def test_a_method_call_is_named_by_its_attribute():
    comm = _Comm()
    assert comm.Barrier() == "Barrier"


def test_a_function_call_is_named_by_its_name_not_by_its_arguments_calls():
    assert Allreduce(len("x"), op=max) == "Allreduce"


def test_a_call_over_several_lines_after_wide_characters():
    label = "µ∑"; name = Allreduce(label,   # noqa: E702  (non-ASCII before the call:
                                   tag=3)        # columns count UTF-8 bytes, not characters)
    assert name == "Allreduce"


def test_a_call_of_an_expression_has_no_name():
    funcs = [Allreduce]
    assert funcs[0]() == ""
    assert (lambda: _named())() == ""   # this frame calls a lambda expression
    assert (lambda: Allreduce())() == "Allreduce"   # the lambda's frame calls a name


@pytest.mark.parametrize("source", ["<string>", "<no file>"])
def test_a_call_without_its_source_has_no_name(source):
    code = compile("name = Allreduce()", source, "exec")
    ns = {"Allreduce": Allreduce}
    exec(code, ns)
    assert ns["name"] == ""
