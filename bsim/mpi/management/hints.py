"""A communicator's info hints, kept as MPICH keeps them (MPI 4.1 Sec. 7.4.4).

Hints change no simulated time; what a program reads back is what MPICH + mpi4py give
under ``mpiexec``:

* ``Get_info`` returns a new info with MPICH's twelve communicator hints (the ones of
  MPI 4.1 Sec. 7.4.4 and MPICH's own), at their defaults or at what the calling process
  set; ``Set_info`` and ``Dup_with_info``/``Idup_with_info`` set those that ``info``
  names and drop any other key (MPICH ignores hints it does not know);
* a new communicator (``Dup``, ``Split``, ``Create``, a topology ...) starts from the
  defaults: ``Dup`` does not carry the hints over, as in MPICH;
* values are read as MPICH reads them: a boolean hint is true for ``"true"`` or a
  non-zero leading integer (``"1"``) and false otherwise (``"TRUE"``, ``"yes"``); the VCI
  hints read ``"0"`` once set (one VCI; ``vci`` sets the sender's and receiver's too);
  ``mpi_memory_alloc_kinds`` cannot be changed;
* hints belong to the calling process (``COMM_SELF`` on one rank does not change
  another's); ``Set_info(INFO_NULL)`` is ``ERR_ARG``, as MPICH refuses it.
"""

from __future__ import annotations

from typing import Any

from ...constants import ERR_ARG
from ...engine.rank import current
from ...errors import MPIUsageError
from ..common.info import Info, check_info

__all__ = ["DEFAULT_HINTS", "get_info", "set_hints"]

_STATE = "bsim.comm.hints"   # engine.user_state: {(world rank, context): {key: value}}
DEFAULT_HINTS: dict[str, str] = {   # MPICH under mpiexec, in its order
    "mpi_assert_no_any_tag": "false", "mpi_assert_no_any_source": "false",
    "mpi_assert_exact_length": "false", "mpi_assert_allow_overtaking": "false",
    "mpi_assert_strict_persistent_collective_ordering": "false",
    "enable_multi_nic_striping": "true", "enable_multi_nic_hashing": "true",
    "multi_nic_pref_nic": "-1", "sender_vci": "-1", "receiver_vci": "-1", "vci": "-1",
    "mpi_memory_alloc_kinds": "mpi,system"}
_VCI = ("vci", "sender_vci", "receiver_vci")


def _atoi(value: str) -> int:
    """C's ``atoi``: the leading integer of *value* (0 if there is none)."""
    text = value.lstrip()
    end = 1 if text[:1] in ("+", "-") else 0
    while end < len(text) and text[end].isdigit():
        end += 1
    try:
        return int(text[:end])
    except ValueError:
        return 0


def _parsed(key: str, value: str) -> str | None:
    """What MPICH keeps for hint *key* set to *value*; None for a key it ignores."""
    if key not in DEFAULT_HINTS or key == "mpi_memory_alloc_kinds":
        return None
    if key in _VCI:
        return "0"
    if key == "multi_nic_pref_nic":
        return str(_atoi(value))
    on = value == "true" or (value != "false" and _atoi(value) != 0)
    return "true" if on else "false"


def set_hints(comm: Any, info: Any, call: str) -> None:
    """Set, for the calling process, the hints of *info* that MPICH knows on *comm*
    (``Set_info``, ``Dup_with_info``; MPI 4.1 Sec. 7.4.4)."""
    check_info(info, call)
    vr = current()
    if not info:   # Dup_with_info(INFO_NULL) sets none; Set_info(INFO_NULL) is refused
        if call != "Set_info":
            return
        raise MPIUsageError(f"rank {vr.rank}: {call}: info is INFO_NULL",
                            error_class=ERR_ARG)
    table: dict[Any, dict[str, str]] = vr.engine.user_state.setdefault(_STATE, {})
    mine = table.setdefault((vr.rank, comm.context), {})
    for key, value in info.items():
        kept = _parsed(key, value)
        if kept is not None:
            mine.update(dict.fromkeys(_VCI, kept) if key == "vci" else {key: kept})


def get_info(comm: Any) -> Info:
    """A new info with *comm*'s hints on the calling process: MPICH's defaults, updated
    by what the process set (MPI 4.1 Sec. 7.4.4; the caller frees it)."""
    vr = current()
    hints = dict(DEFAULT_HINTS)
    hints.update(vr.engine.user_state.get(_STATE, {}).get((vr.rank, comm.context), {}))
    return Info.Create(hints)
