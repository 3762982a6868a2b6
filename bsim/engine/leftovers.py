"""What a finished run left undone, described for its warnings (``docs/errors.md``).

MPI lets a program end with nonblocking requests it never completed and with messages
nobody received; bsim counts both per rank (``Result.pending_requests``,
``Result.unreceived``) and ``bsim run`` warns of them on standard error.  The warnings
name one example each, found here once the run is over: the first message left in a
mailbox (its receiver, sender, tag, size and send time) and the first pending request
the program still holds (its rank, call, peer and tag).  The user's line of either is not
known: recording it would cost every send and receive.
"""

from __future__ import annotations

import gc
from typing import Any

from ..constants import ANY_SOURCE, ANY_TAG

__all__ = ["first_unreceived", "first_pending"]


def first_unreceived(engine: Any) -> str:
    """``rank 1 never received a send from world rank 0, tag 7, 8 bytes, sent at t=...``:
    the earliest message left in the mailbox of the lowest such rank of this process
    ("" when none is)."""
    for vr in engine.ranks:
        box = vr.box
        if box is not None and box.unexpected:
            msg = min(box.unexpected, key=lambda m: m.t_send)
            kind = "lowercase send (pickled object)" if msg.lower else "send"
            return (f"rank {vr.rank} never received a {kind} from world rank {msg.src}, tag "
                    f"{msg.tag}, {msg.nbytes:,} bytes, sent at t={msg.t_send!r} s")
    return ""


def first_pending(engine: Any, request_type: type) -> str:
    """``rank 0's Irecv(source=world 1, tag=3)``: a request of *request_type* that the
    program was handed and never completed, among those it still holds (lowest rank
    first; "" when none is held any more).  Looked for only when some are pending: it
    walks the objects the collector tracks."""
    if not any(vr.open_requests for vr in engine.ranks):
        return ""
    found = [obj for obj in gc.get_objects()
             if type(obj) is request_type and getattr(obj, "handed", False)
             and getattr(getattr(obj, "owner", None), "engine", None) is engine]
    if not found:
        return ""
    req = min(found, key=lambda r: (r.owner.rank, r.t_post))
    peer = []
    if "recv" in req.call.lower():
        peer.append("source=ANY_SOURCE" if req.src == ANY_SOURCE
                    else f"source=world {req.src}")
        peer.append("tag=ANY_TAG" if req.tag == ANY_TAG else f"tag={req.tag}")
    return f"rank {req.owner.rank}'s {req.call}({', '.join(peer)})"
