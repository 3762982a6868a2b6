"""Skeletons of MPI applications, runnable in bsim and under real mpiexec.

Each is an mpi4py-style program where compute is ``bsim.add_time`` from a
kernel-time model and large buffers are ``bsim.buffer`` placeholders,
registered by name for ``bsim run NAME``.
"""

from __future__ import annotations

from .registry import Param, Skeleton, get, names, register

__all__ = ["Param", "Skeleton", "get", "names", "register"]
