"""Which reader a trace needs: :func:`load_trace` looks at the path and its first bytes."""

from __future__ import annotations

from pathlib import Path

from .model import Trace
from .otf2io import read_otf2
from .rawlog import read_raw
from .ti import read_ti

__all__ = ["load_trace"]


def load_trace(path: str | Path) -> Trace:
    """Read a trace of any supported kind: an OTF2 archive (``*.otf2`` or its directory),
    a SimGrid time-independent trace (its index file or one rank's file), a directory of
    ``bsim record``'s raw ``rank-N.bin`` files, or bsim's JSON trace."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{path}: no such trace file or directory")
    if p.is_dir():
        if any(p.glob("rank-*.bin")):
            return read_raw(p)
        anchors = sorted(p.glob("*.otf2"))
        if anchors:
            return read_otf2(anchors[0])
        raise ValueError(f"{path}: a directory with neither rank-N.bin files nor an .otf2 "
                         "anchor file")
    if p.suffix == ".otf2":
        return read_otf2(p)
    head = p.read_bytes()[:64]
    if head.lstrip().startswith(b"{"):
        return Trace.from_json(p)
    return read_ti(p)
