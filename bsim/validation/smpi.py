"""Run one skeleton under SimGrid's SMPI and under bsim on the same platform.

SMPI (SimGrid 3.32, Debian's ``libsimgrid-dev``) is a trusted flow-level MPI
simulator: C programs compiled with ``smpicc`` run under ``smpirun`` on an XML
platform.  :class:`Platform` describes a network once and gives both sides:

* ``star``: every host has a private link (``lat``, ``bw``) to a crossbar;
  SimGrid ``<cluster>`` without backbone, links split-duplex.  A message
  crosses the sender's up link and the receiver's down link: ``2 lat + s/bw``
  alone, and the links are shared max-min.  bsim: ``hockney`` with
  ``latency = 2 lat``, ``bandwidth = bw``, whose NICs under ``--contention
  fluid`` are exactly one sending and one receiving link per rank.
* ``torus``: SimGrid ``<cluster topology="TORUS">``, one host per node, one
  split-duplex link (``lat``, ``bw``) per node and dimension.  bsim:
  ``torus`` with ``latency = 0``, ``hop_latency = lat``, ``link_bandwidth = bw``.
  Both route in dimension order the short way round; at exactly half a ring
  SimGrid goes ``+`` except from coordinate ``k/2`` (then ``-``): bsim's
  ``tie=simgrid`` (its default, ``plus``, always goes ``+``).
* ``fattree``: a k-ary n-tree (``dims = (k, n)``), SimGrid ``<cluster
  topology="FAT_TREE" topo_parameters="n;k,..;1,k,..;1,..">``, every link
  split-duplex (``lat``, ``bw``), d-mod-k up routing.  bsim: ``fattree:k=,n=``
  with ``latency = hop_latency = lat`` (a route through ``2L - 1`` switches
  crosses ``2L`` links), ``link_bandwidth = bw``.
* ``dragonfly``: ``dims = (G, C, R, N)`` and ``links = (group, chassis, router)``
  link counts, SimGrid ``<cluster topology="DRAGONFLY" topo_parameters="G,g;C,c;R,r;N">``,
  every link split-duplex (``lat``, ``bw`` times its count).  bsim: ``dragonfly`` with
  ``latency = 0``, ``hop_latency = global_latency = lat`` and every bandwidth ``bw``
  (a route's links each pay ``lat``), ``arrangement=simgrid``, minimal routing.

SMPI runs with its correction factors and extras off so that both model the
same physics: ``network/model:CM02`` (pure max-min with latency, no
LV08 factors), ``network/crosstraffic:0`` (no acknowledgement traffic on the
reverse links), ``network/TCP-gamma:0`` (no window limit), and
``smpi/simulate-computation:no`` (the host's own compute is not timed; the
programs' compute blocks are ``smpi_execute(seconds)``, bsim's ``add_time``) and
``smpi/host-speed:1Gf`` equal to the platform's host speed (``smpi_execute``
converts seconds to flops at ``smpi/host-speed``, default 20 kflop/s, and runs
them on the host: without it a second of compute took 20 us).
Its point-to-point rule (detached sends below 64 KiB, synchronous from 65,536 bytes;
data moving once both sides are posted) is bsim's
``--protocol loggp:injection=parallel,data=match,eager_limit=65535``
(``docs/protocols.md``), and
CM02 shares a link among flows in inverse proportion to their route latency
(a flow's sharing penalty is its latency) and lets a flow's bytes move only
once its latency has passed: bsim's
``--contention fluid:share=latency,start=after_latency``.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bsim

from ..engine.model_defaults import SMPI_CONTENTION, SMPI_PROTOCOL
from .programs import PROGRAMS

__all__ = ["Platform", "available", "run_smpi", "run_bsim", "SMPI_PROTOCOL", "SMPI_CONTENTION",
           "SMPI_CONFIG"]

PROGRAM_DIR = Path(__file__).with_name("c")
CACHE = Path(os.environ.get("BSIM_CACHE", Path.home() / ".cache" / "bsim")) / "smpi"

#: smpirun options: SimGrid's physics without correction factors.
SMPI_CONFIG = ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
               "--cfg=network/TCP-gamma:0", "--cfg=smpi/simulate-computation:no",
               "--cfg=smpi/host-speed:1Gf", "--log=root.thres:critical")


def available() -> bool:
    """Whether ``smpicc`` and ``smpirun`` are on the PATH."""
    return shutil.which("smpicc") is not None and shutil.which("smpirun") is not None


@dataclass(frozen=True)
class Platform:
    """A network both simulators can build: ``kind`` star, torus, fattree or dragonfly."""

    kind: str
    nodes: int
    lat: float = 1e-6           # seconds per link
    bw: float = 1e9             # bytes/second per link and direction
    dims: tuple[int, ...] = ()  # torus: ring sizes; fattree: (k, n); dragonfly: (G, C, R, N)
    links: tuple[int, int, int] = (1, 1, 1)   # dragonfly: group, chassis, router link counts

    def xml(self) -> str:
        """The SimGrid platform file."""
        topo = ""
        if self.kind == "torus":
            topo = f' topology="TORUS" topo_parameters="{",".join(map(str, self.dims))}"'
        elif self.kind == "fattree":
            k, n = self.dims
            down, up, count = ",".join([str(k)] * n), ",".join(["1"] + [str(k)] * (n - 1)), \
                ",".join(["1"] * n)
            topo = f' topology="FAT_TREE" topo_parameters="{n};{down};{up};{count}"'
        elif self.kind == "dragonfly":
            (g, c, r, n), (gl, cl, rl) = self.dims, self.links
            topo = f' topology="DRAGONFLY" topo_parameters="{g},{gl};{c},{cl};{r},{rl};{n}"'
        elif self.kind != "star":
            raise ValueError(f"platform kind must be star, torus, fattree or dragonfly, "
                             f"got {self.kind!r}")
        return ("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                f'  <cluster id="c" prefix="node-" suffix="" radical="0-{self.nodes - 1}" '
                f'speed="1Gf" bw="{self.bw!r}Bps" lat="{self.lat!r}s" '
                f'sharing_policy="SPLITDUPLEX"{topo}/>\n'
                "</platform>\n")

    def bsim_network(self) -> str:
        """The bsim network spec of the same platform."""
        if self.kind == "star":
            return f"hockney:latency={2 * self.lat!r},bandwidth={self.bw!r}"
        if self.kind == "fattree":
            k, n = self.dims
            return (f"fattree:k={k},n={n},link_bandwidth={self.bw!r},latency={self.lat!r},"
                    f"hop_latency={self.lat!r},cores=1")
        if self.kind == "dragonfly":
            (g, c, r, n), (gl, cl, rl) = self.dims, self.links
            return (f"dragonfly:groups={g},chassis={c},routers={r},terminals={n},"
                    f"group_links={gl},chassis_links={cl},router_links={rl},"
                    f"terminal_bandwidth={self.bw!r},local_bandwidth={self.bw!r},"
                    f"global_bandwidth={self.bw!r},hop_latency={self.lat!r},"
                    f"global_latency={self.lat!r},latency=0,arrangement=simgrid,"
                    f"routing=minimal,cores=1")
        return (f"torus:dims={'x'.join(map(str, self.dims))},link_bandwidth={self.bw!r},"
                f"latency=0,hop_latency={self.lat!r},tie=simgrid,cores=1")


def _binary(program: str) -> Path:
    """``smpicc`` build of ``c/PROGRAM.c``, cached by the source's hash."""
    src = PROGRAM_DIR / f"{program}.c"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    exe = CACHE / f"{program}-{digest}"
    if not exe.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_suffix(".tmp")
        subprocess.run(["smpicc", "-O1", str(src), "-o", str(tmp)], check=True,
                       capture_output=True, text=True)
        tmp.replace(exe)
    return exe


@dataclass
class Run:
    """One simulator's answer: predicted seconds, host wall seconds, peak RSS in MiB, and
    (bsim) the MPI calls the program made."""

    time: float
    wall: float
    rss_mib: float
    calls: int = 0


def run_smpi(program: str, platform: Platform, nranks: int, nbytes: int, iters: int,
             compute: float, timeout: float = 600, cfg: tuple[str, ...] = (),
             extra: tuple[str, ...] = ()) -> Run:
    """Run ``c/PROGRAM.c`` under ``smpirun`` on *platform*; its simulated time.

    *cfg*: more SimGrid settings, e.g. ``("smpi/allreduce:rdb",)``; *extra*: more
    arguments after ``bytes iterations compute`` (``collective``'s operation).
    """
    exe = _binary(program)
    with tempfile.TemporaryDirectory() as tmp:
        plat = Path(tmp) / "platform.xml"
        plat.write_text(platform.xml())
        hosts = Path(tmp) / "hosts"
        hosts.write_text("".join(f"node-{r % platform.nodes}\n" for r in range(nranks)))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        out = subprocess.run(["smpirun", "-np", str(nranks), "-platform", str(plat),
                              "-hostfile", str(hosts), *SMPI_CONFIG,
                              *(f"--cfg={c}" for c in cfg), str(exe), str(nbytes),
                              str(iters), repr(compute), *extra],
                             capture_output=True, text=True, timeout=timeout, cwd=tmp)
        wall = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    found = re.search(r"BSIM_SMPI_TIME (\S+)", out.stdout)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"smpirun {program} -np {nranks} failed ({out.returncode}): "
                           f"{out.stderr.strip()[-500:]}")
    return Run(float(found.group(1)), wall, max(rss, before) / 1024)


def run_bsim(program: str, platform: Platform, nranks: int, nbytes: int, iters: int,
             compute: float, protocol: str = SMPI_PROTOCOL,
             contention: str = SMPI_CONTENTION, collectives: str | None = None,
             extra: tuple[str, ...] = ()) -> Run:
    """The Python twin of *program* under bsim on *platform* (*extra*: as for
    :func:`run_smpi`)."""
    main: Callable[..., None] = PROGRAMS[program]
    t0 = time.perf_counter()
    res = bsim.simulate(main, ranks=nranks, network=platform.bsim_network(), protocol=protocol,
                        contention=contention, collectives=collectives,
                        args=(nbytes, iters, compute, *extra))
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Run(float(res.elapsed), wall, rss, int(res.ops.sum()))
