"""The part of Cython's pure-Python mode that bsim's typed modules use, for a run without
Cython.

The hot modules (``bsim.engine.compiled.TYPED``) declare the C types of their locals with
``@cython.locals(...)``.  Compiled, Cython reads the declarations; interpreted, they must
cost nothing: the decorator returns the function itself, and the type names are Python's
own types.  A module imports ``cython`` and falls back to this one when Cython is absent
(it is a build-time dependency only)::

    try:
        import cython
    except ImportError:
        from bsim.engine import pure_cython as cython
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

compiled = False
double = float
longlong = int
long = int
bint = bool
Py_ssize_t = int


def locals(**types: Any) -> Callable[[F], F]:   # noqa: A001  (Cython's name)
    """``@cython.locals(x=T, ...)``: C types of a function's locals when compiled; here the
    function unchanged."""
    def unchanged(fn: F) -> F:
        return fn
    return unchanged


def boundscheck(flag: bool) -> Callable[[F], F]:
    """``@cython.boundscheck(False)``: compiled, a function's list and buffer indexing
    skips its range checks (its indices are right by construction); here a no-op."""
    def unchanged(fn: F) -> F:
        return fn
    return unchanged


wraparound = boundscheck   # ``@cython.wraparound(False)``: no negative-index handling

C = TypeVar("C", bound=type)


def cclass(cls: C) -> C:
    """``@cython.cclass``: compiled, the class is an extension type (its ``.pxd`` declares
    its C fields); here the class unchanged."""
    return cls


def freelist(size: int) -> Callable[[C], C]:
    """``@cython.freelist(n)``: compiled, the extension type keeps up to *n* freed
    instances' memory for its next ones; here a no-op."""
    def unchanged(cls: C) -> C:
        return cls
    return unchanged
