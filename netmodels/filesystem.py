"""Parallel-file-system cost models: the simulated time of MPI-IO calls (``docs/io.md``).

A file lives on a Lustre-like parallel file system: its bytes are striped round-robin
in ``stripe_size`` units over ``stripe_count`` object storage targets (OSTs) of
``ost_bandwidth`` bytes/s each; each client moves at most ``client_bandwidth`` bytes/s
and the whole file system at most ``aggregate_bandwidth``; metadata operations (open,
close, delete, resize) cost ``metadata`` seconds on the metadata server.

**Independent access** of ``s`` bytes (a list of byte segments of the file)::

    T = latency + max(B_ost / ost_bandwidth, s / client_bandwidth, s / aggregate_bandwidth)

where ``B_ost`` is the largest number of the access's bytes that fall on one OST (the
segments cut at stripe boundaries, stripe ``k`` on OST ``k mod stripe_count``): the
``sum L + max(C S / N B)`` striping rule of the Blue Waters tutorial applied to OSTs.
A zero-byte access costs nothing.

**Collective access** (two-phase I/O, ROMIO's collective buffering: Thakur, Gropp and
Lusk, "Data sieving and collective I/O in ROMIO", 1999) of ``P`` ranks: the group
synchronises (the caller charges that), then ``A = min(P, aggregators or stripe_count)``
aggregators access the **union** of the members' byte ranges, each byte once however
many members asked for it (:func:`union`; ROMIO's aggregators read or write their file
domain once), ``S`` bytes in all, as above with ``A`` clients::

    T_io = latency + max(B_ost / ost_bandwidth, S / (A * client_bandwidth),
                         S / aggregate_bandwidth)

The exchange between the members and the aggregators is the caller's (it needs the
network, ``bsim/mpi/io/collective.py``); :meth:`Lustre.domains` says which aggregator
handles which bytes: stripe ``k`` to aggregator ``k mod A``, as ROMIO's Lustre driver
assigns its stripe-aligned file domains (``ADIOI_LUSTRE_Calc_aggregator``).

**Contention between calls** (:meth:`Lustre.finish`): each OST of a file, each rank's
client link and the file system's aggregate link serve the requests that reach them one
after the other, in the order of their simulated start times (first come, first
served): a request of ``b`` bytes for OST ``j`` starting at ``t`` (after the latency)
holds it from ``max(t, free_j)`` to that plus ``b / ost_bandwidth``; the caller's client
link from ``max(t, client_free)`` for ``s / client_bandwidth``; the aggregate link from
``max(t, aggregate_free)`` for ``s / aggregate_bandwidth``.  The call ends when the last
of them is done.  With everything idle this is the formula above.  A collective call's
aggregators use the aggregate link and the OSTs (their ``A`` client links are theirs).

**Defaults** (``lustre``): ``stripe_count = 1`` and ``stripe_size = 1 MiB`` are Lustre's
own defaults (Lustre Operations Manual, "Managing File Layout"); ``ost_bandwidth =
2.8e9`` B/s is NERSC Cori scratch's aggregate ">700 GB/s" over its 248 OSTs (NERSC
documentation, "Cori SCRATCH"), and ``aggregate_bandwidth = 7e11`` the same figure.
``latency = 1e-4`` s (one client-to-OST round trip with the server's request handling),
``metadata = 1e-3`` s (a metadata-server operation) and ``client_bandwidth = 5e9`` B/s
(one node's share of the injection bandwidth) are assumptions of this model, not
measurements: set them from your machine (``bsim run --filesystem lustre:latency=...``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from .registry import Registry
from .spec import SpecError, parse_spec

__all__ = ["FileSystemModel", "Lustre", "FILESYSTEMS", "build_filesystem", "DEFAULT_FILESYSTEM",
           "union"]

DEFAULT_FILESYSTEM = "lustre"
"""The file system of a run that names none."""

Segment = tuple[int, int]   # (byte offset in the file, length)

MAX_STRIPE_COUNT = 2000
"""Lustre's most OSTs per file (``LOV_MAX_STRIPE_COUNT`` in Lustre's ``lustre_user.h``)."""


def union(segments: Iterable[Segment]) -> list[Segment]:
    """The byte ranges of *segments* merged: sorted, disjoint, not adjacent, each byte of
    any segment once (empty segments dropped).  ``[(0, 10), (5, 10), (20, 5)]`` ->
    ``[(0, 15), (20, 5)]``."""
    out: list[Segment] = []
    end = -1
    for off, n in sorted(s for s in segments if s[1] > 0):
        if off <= end:   # overlaps or touches the last range
            if off + n > end:
                end = off + n
                out[-1] = (out[-1][0], end - out[-1][0])
        else:
            out.append((off, n))
            end = off + n
    return out


class FileSystemModel(ABC):
    """Base class: ``independent(segments)``, ``collective(segments, aggregators)``,
    ``metadata_op()``; ``spec()`` gives the spec string that rebuilds the model."""

    name = ""
    parameters: dict[str, str] = {}
    defaults: dict[str, float] = {}

    whole: tuple[str, ...] = ()
    """Parameters that must be whole numbers (counts, sizes)."""

    def __init__(self, **params: Any) -> None:
        values = dict(self.defaults)
        for key, value in params.items():
            if (isinstance(value, bool) or not isinstance(value, (int, float))   # no bool
                    or not math.isfinite(value) or value < 0):
                raise SpecError(f"file system {self.name!r}: {key} must be a finite number "
                                f">= 0, got {value!r}")
            if key in self.whole and value != int(value):
                raise SpecError(f"file system {self.name!r}: {key} must be a whole number, "
                                f"got {value!r}")
            values[key] = int(value) if key in self.whole else value
        self.values = values

    def spec(self) -> str:
        """``NAME:k=v,...`` with every parameter."""
        return f"{self.name}:" + ",".join(f"{k}={self.values[k]!r}" for k in self.parameters)

    @abstractmethod
    def independent(self, segments: Iterable[Segment]) -> float:
        """Seconds one rank's access of *segments* takes."""

    @abstractmethod
    def collective(self, segments: Iterable[Segment], ranks: int) -> float:
        """Seconds the aggregators of a collective access by *ranks* ranks take."""

    @abstractmethod
    def metadata_op(self) -> float:
        """Seconds of one metadata-server operation."""

    @abstractmethod
    def aggregator_count(self, ranks: int) -> int:
        """How many aggregators a collective access of *ranks* ranks uses."""

    @abstractmethod
    def domains(self, segments: Iterable[Segment], aggregators: int) -> dict[int, int]:
        """Bytes of *segments* in each of *aggregators* aggregators' file domains
        (``{aggregator: bytes}``, aggregators with none left out)."""

    @abstractmethod
    def targets(self) -> int:
        """How many storage targets one file's bytes are spread over (queues of
        :meth:`finish`)."""

    @abstractmethod
    def finish(self, segments: Iterable[Segment], start: float, free: list[float],
               clients: int = 1, links: list[float] | None = None) -> float:
        """When an access of *segments* starting at *start* by *clients* clients ends,
        given when each target is *free* and (*links*) when the client link and the
        file system's aggregate link are free (all updated)."""


FILESYSTEMS: Registry[type[FileSystemModel]] = Registry("file system model", SpecError)


@FILESYSTEMS.register
class Lustre(FileSystemModel):
    """Lustre-like striped file system: OSTs, client and aggregate bandwidth, metadata."""

    name = "lustre"
    parameters = {
        "latency": "seconds per I/O call (client to OST and back)",
        "metadata": "seconds per metadata operation (open, close, delete, set_size)",
        "stripe_count": "OSTs a file is striped over",
        "stripe_size": "bytes per stripe",
        "ost_bandwidth": "bytes/s of one OST",
        "client_bandwidth": "bytes/s of one client",
        "aggregate_bandwidth": "bytes/s of the whole file system",
        "aggregators": "collective-buffering aggregators (0: stripe_count)",
    }
    defaults = {"latency": 1e-4, "metadata": 1e-3, "stripe_count": 1,
                "stripe_size": 1048576, "ost_bandwidth": 2.8e9, "client_bandwidth": 5e9,
                "aggregate_bandwidth": 7e11, "aggregators": 0}

    whole = ("stripe_count", "stripe_size", "aggregators")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        v = self.values
        for key in ("stripe_count", "stripe_size", "ost_bandwidth", "client_bandwidth",
                    "aggregate_bandwidth"):
            if not v[key] > 0:
                raise SpecError(f"file system 'lustre': {key} must be > 0, got {v[key]!r}")
        if v["stripe_count"] > MAX_STRIPE_COUNT:
            raise SpecError(f"file system 'lustre': stripe_count must be <= "
                            f"{MAX_STRIPE_COUNT} (Lustre's LOV_MAX_STRIPE_COUNT), got "
                            f"{v['stripe_count']!r}")

    def ost_bytes(self, segments: Iterable[Segment]) -> tuple[int, int]:
        """``(total bytes, largest number of bytes on one OST)`` of *segments*."""
        per = self.per_ost(segments)
        return sum(per), max(per)

    def per_ost(self, segments: Iterable[Segment]) -> list[int]:
        """Bytes of *segments* on each OST of the file (stripe ``k`` on ``k mod count``)."""
        return self._round_robin(segments, int(self.values["stripe_count"]))

    def domains(self, segments: Iterable[Segment], aggregators: int) -> dict[int, int]:
        """Stripe ``k`` is aggregator ``k mod A``'s (ROMIO's Lustre driver,
        ``ADIOI_LUSTRE_Calc_aggregator``): bytes per aggregator, those with none left out."""
        count = max(1, aggregators)
        ssize = int(self.values["stripe_size"])
        out: dict[int, int] = {}
        for off, n in segments:
            if n <= 0:
                continue
            end = off + n
            first, last = off // ssize, (end - 1) // ssize
            if last - first >= count:   # a cycle or more: O(count)
                for j, b in enumerate(self._round_robin([(off, n)], count)):
                    if b:
                        out[j] = out.get(j, 0) + b
                continue
            for k in range(first, last + 1):   # fewer stripes than aggregators
                j = k % count
                out[j] = out.get(j, 0) + min(end, (k + 1) * ssize) - max(off, k * ssize)
        return out

    def _round_robin(self, segments: Iterable[Segment], count: int) -> list[int]:
        """Bytes of *segments* in each of *count* bins, stripe ``k`` in bin ``k mod count``."""
        ssize = int(self.values["stripe_size"])
        per = [0] * count
        for off, n in segments:
            if n <= 0:
                continue
            end = off + n
            first, last = off // ssize, (end - 1) // ssize
            if first == last:
                per[first % count] += n
                continue
            per[first % count] += (first + 1) * ssize - off
            per[last % count] += end - last * ssize
            full = last - first - 1           # whole stripes between the two ends
            if full:
                q, r = divmod(full, count)
                for j in range(count):
                    per[j] += q * ssize
                for k in range(r):
                    per[(first + 1 + k) % count] += ssize
        return per

    def targets(self) -> int:
        """``stripe_count``."""
        return int(self.values["stripe_count"])

    def finish(self, segments: Iterable[Segment], start: float, free: list[float],
               clients: int = 1, links: list[float] | None = None) -> float:
        """First come, first served OSTs and links (module docstring); *free* and
        *links* (``[client free, aggregate free]``, None: not shared) are updated."""
        per = self.per_ost(segments)
        total = sum(per)
        if total == 0:
            return start
        v = self.values
        t = start + v["latency"]
        client = total / (clients * v["client_bandwidth"])
        aggregate = total / v["aggregate_bandwidth"]
        if links is None:
            end = max(t + client, t + aggregate)
        else:
            links[0] = max(t, links[0]) + client
            links[1] = max(t, links[1]) + aggregate
            end = max(links[0], links[1])
        bw = v["ost_bandwidth"]
        for j, b in enumerate(per):
            if b:
                done = max(t, free[j]) + b / bw
                free[j] = done
                end = max(end, done)
        return end

    def _time(self, segments: Iterable[Segment], clients: int) -> float:
        total, ost_max = self.ost_bytes(segments)
        if total == 0:
            return 0.0
        v = self.values
        return v["latency"] + max(ost_max / v["ost_bandwidth"],
                                  total / (clients * v["client_bandwidth"]),
                                  total / v["aggregate_bandwidth"])

    def independent(self, segments: Iterable[Segment]) -> float:
        """``latency + max(B_ost / ost_bw, s / client_bw, s / aggregate_bw)``."""
        return self._time(segments, 1)

    def aggregator_count(self, ranks: int) -> int:
        """``A = min(P, aggregators or stripe_count)``."""
        agg = int(self.values["aggregators"]) or int(self.values["stripe_count"])
        return max(1, min(ranks, agg))

    def collective(self, segments: Iterable[Segment], ranks: int) -> float:
        """The aggregators' access of the :func:`union` of *segments*: as
        :meth:`independent` with ``A`` clients."""
        return self._time(union(segments), self.aggregator_count(ranks))

    def metadata_op(self) -> float:
        """``metadata`` seconds."""
        return float(self.values["metadata"])


def build_filesystem(spec: str | FileSystemModel | None) -> FileSystemModel:
    """A model from a spec string (``"lustre:stripe_count=8"``), a model, or None (default)."""
    if isinstance(spec, FileSystemModel):
        return spec
    if spec is None:
        spec = DEFAULT_FILESYSTEM
    if not isinstance(spec, str):
        raise SpecError(f"file system spec must be a string, got {type(spec).__name__}")
    name, params = parse_spec(spec, "file system spec")
    cls = FILESYSTEMS.lookup(name)
    FILESYSTEMS.check_keys(name, params, cls.parameters)
    return cls(**params)
