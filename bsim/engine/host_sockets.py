"""Host sockets that let the other ranks run: a rank waiting on a socket polls.

Every virtual rank runs on the one OS thread of its host process, so a rank that
blocks in ``accept()`` for a connection another rank would make blocks that rank
too: the run would hang (``host_watchdog.py`` would end it after a minute).  While
the engine runs, :class:`CooperativeSockets` makes the blocking calls of
``socket.socket`` -- ``accept``, ``connect``, ``recv``, ``recv_into``, ``recvfrom``,
``send``, ``sendall`` -- on a socket in blocking mode, called from a rank, try the
call without blocking and, when it would block, *poll* (``Protocol.poll``: the rank
is charged ``poll_time`` of wait and yields, as ``while not req.Test()`` does) until
it can complete.  A rank that waits forever then ends in the engine's livelock
report, which names it and its call.  Sockets with a timeout or in non-blocking mode,
and calls outside a rank, behave as always.

This costs nothing per MPI call: the methods are swapped on the ``socket.socket``
class when the run starts and restored when it ends.  Simulated time spent waiting
on a socket is poll time; the host I/O itself takes no simulated time.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable
from typing import Any

import greenlet

__all__ = ["CooperativeSockets"]

_BLOCKING = ("accept", "recv", "recv_into", "recvfrom", "send")
_IN_PROGRESS = {errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK, errno.EINTR}


def _rank_of_caller() -> Any:
    return getattr(greenlet.getcurrent(), "vrank", None)


def _polling(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: socket.socket, *args: Any, **kwargs: Any) -> Any:
        vr = _rank_of_caller()
        if vr is None or self.gettimeout() is not None:
            return original(self, *args, **kwargs)
        self.setblocking(False)
        try:
            while True:
                try:
                    return original(self, *args, **kwargs)
                except (BlockingIOError, InterruptedError):
                    vr.engine.protocol.poll(vr, f"socket.{name}")
        finally:
            if self.fileno() >= 0:
                self.setblocking(True)
    method.__name__ = name
    method.__doc__ = original.__doc__
    return method


def _connect(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect(self: socket.socket, address: Any) -> None:
        vr = _rank_of_caller()
        if vr is None or self.gettimeout() is not None:
            original(self, address)
            return
        self.setblocking(False)
        try:
            err = self.connect_ex(address)
            while err in _IN_PROGRESS:
                vr.engine.protocol.poll(vr, "socket.connect")
                err = self.connect_ex(address)
        finally:
            if self.fileno() >= 0:
                self.setblocking(True)
        if err not in (0, errno.EISCONN):
            raise OSError(err, os.strerror(err))
    connect.__doc__ = original.__doc__
    return connect


def _sendall_of(original: Callable[..., Any]) -> Callable[..., Any]:
    def sendall(self: socket.socket, data: Any, *flags: int) -> None:
        """``sendall`` as repeated (polling) ``send`` calls: a retried ``sendall`` could
        send a part twice."""
        if _rank_of_caller() is None or self.gettimeout() is not None:
            original(self, data, *flags)
            return
        view = memoryview(data).cast("B")
        while view:
            view = view[self.send(view, *flags):]
    return sendall


class CooperativeSockets:
    """Swap the blocking ``socket.socket`` methods for polling ones (:meth:`arm`) and
    back (:meth:`disarm`)."""

    def __init__(self) -> None:
        self.saved: dict[str, Any] = {}

    def arm(self) -> None:
        if self.saved:
            return
        cls = socket.socket
        methods = {name: _polling(name, getattr(cls, name)) for name in _BLOCKING}
        methods["connect"] = _connect(cls.connect)
        methods["sendall"] = _sendall_of(cls.sendall)
        for name, method in methods.items():
            self.saved[name] = cls.__dict__.get(name)
            setattr(cls, name, method)

    def disarm(self) -> None:
        cls = socket.socket
        for name, original in self.saved.items():
            if original is None:
                delattr(cls, name)   # inherited from _socket.socket
            else:
                setattr(cls, name, original)
        self.saved.clear()
