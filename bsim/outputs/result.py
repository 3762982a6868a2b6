"""``Result``: what a simulation predicts, per rank and in total.

Per-rank numpy arrays ``finish``, ``calc``, ``wait``, ``comm`` (seconds) with
``finish == calc + wait + comm``, and counts ``ops``, ``messages``,
``bytes``.  ``elapsed`` is the predicted run time: the latest finish.
JSON and CSV outputs are written atomically; two runs of the same input give
identical JSON except the ``host`` section (wall time, events per second, and for
a run over K host processes ``distributed``: processes, partition, windows,
events shipped), whatever the number of host processes.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..version import __version__
from .files import atomic_write_text
from .model_level import compute_source, model_level

__all__ = ["Result", "compute_spec"]

FORMAT = "bsim-result/1"


@dataclass
class Result:
    """The outcome of :func:`bsim.simulate` (see module docstring)."""

    ranks: int
    finish: np.ndarray
    calc: np.ndarray
    wait: np.ndarray
    comm: np.ndarray
    ops: np.ndarray
    messages: np.ndarray
    bytes: np.ndarray
    network: str = ""
    protocol: str = ""
    collectives: str = ""
    contention: str = "none"
    program: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    events: int = 0
    host_seconds: float = 0.0
    returns: list[Any] = field(default_factory=list, repr=False)
    distributed: dict[str, Any] = field(default_factory=dict)   # host processes, windows
    noise: str = ""
    machine: str = ""          # preset (or file) and variant, e.g. "power5:p1024"
    kernel_model: str = ""     # where the compute times came from (bsim/machines/kernels.py)
    compute: str = ""          # host-measured compute: "measure:scale=X" ("": add_time only)
    version: str = field(default_factory=lambda: __version__)   # of bsim, that predicted
    flops: float = 0.0         # floating-point operations of the run, when the program knows
    peak_flops: float = 0.0    # the machine's peak for these ranks (flop/s), when known
    filesystem: str = ""       # the MPI-IO cost model's spec, when given or used (docs/io.md)
    """The OS-noise model that stretched ``add_time`` (its spec; "" for none)."""
    pending_requests: dict[int, int] = field(default_factory=dict)
    """World rank -> nonblocking requests it never completed (Wait/Test) nor freed."""
    unreceived: dict[int, int] = field(default_factory=dict)
    """World rank -> messages sent to it that it never received (a send under the ``bsim``
    protocol completes without its receive: the run ends with them in the mailbox)."""
    pending_first: str = ""
    """One request never completed that the program still held: its rank, call and peer."""
    unreceived_first: str = ""
    """The first message never received (lowest receiving rank, earliest sent): its
    receiver, sender, tag, size and send time, for the warning."""
    notes: list[str] = field(default_factory=list)
    """What the user should know to read the prediction (a machine run without its per-P
    variant: ``bsim.outputs.model_level.nearest_per_p_variant``)."""
    inert: list[str] = field(default_factory=list)
    """Network settings that could not act in this run, each with why (``g`` without the
    ``loggp`` protocol, ``nics`` without fluid contention): warned of, not ignored."""
    formula_collectives: int = 0
    """Collective calls priced by a formula (contention-free, without network noise) in a run
    that models contention or network noise (0 otherwise): their messages never entered the
    modelled network (``docs/collectives.md``)."""
    collective_algorithms: dict[str, dict[str, int]] = field(default_factory=dict)
    """``{op: {algorithm: calls}}``: the algorithm that priced (``analytic``) or was expanded
    into messages (``algorithmic``) for each collective call of more than one member,
    under MPICH's rules or an override; calls priced by ``clog`` or ``table`` are not in
    it (``docs/collectives.md``)."""
    spawned: int = 0
    """Ranks the run created with ``MPI.Comm.Spawn``: the last ones of the per-rank arrays."""
    inputs: dict[str, str] = field(default_factory=dict)
    """``"KIND NAME" -> "sha256:..."``: the files the run read that shaped it (the program,
    an explicit mapping, a collective table, a machine file other than a bundled preset),
    by content (``netmodels/input_files.py``)."""
    calibration_flags: dict[str, list[str]] = field(default_factory=dict)
    """``fit -> [flag, ...]``: the fits the run took from its machine file that their
    calibration flagged (``[network]``, ``[kernels.halo2d] t_point``; the flags of
    ``[hardware] calibration_*_flags``, ``bsim/machines/flags.py``), warned of at run time."""
    node: str = ""
    """The machine's node: its devices and NICs (``[node]``, ``docs/machines.md``)."""
    layout: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Per rank: ``node``, ``device`` and ``nic`` (its NIC on its node), when the network
    places ranks on nodes of several devices or NICs (``netmodels/nodes.py``)."""
    modules: str = ""
    """``"shared"`` when the ranks shared the program's modules (``private_modules=False``,
    ``--shared-modules``): module-level state is then one for all ranks, which can change
    the prediction; ``""`` for private copies, the default."""

    # -- summaries -----------------------------------------------------------
    @property
    def elapsed(self) -> float:
        """Predicted run time: the latest rank's finish, in seconds."""
        return float(self.finish.max()) if self.ranks else 0.0

    @property
    def total_ops(self) -> int:
        """MPI calls and ``add_time`` calls over all ranks."""
        return int(self.ops.sum())

    @property
    def total_messages(self) -> int:
        """Messages sent over all ranks: point-to-point (an expanded collective's too) and
        one-sided (each RMA operation one per direction, its lock and epoch notices;
        ``docs/rma.md``)."""
        return int(self.messages.sum())

    @property
    def total_bytes(self) -> int:
        """Bytes of the :attr:`total_messages` over all ranks (both directions of a
        one-sided operation)."""
        return int(self.bytes.sum())

    @property
    def ops_per_second(self) -> float:
        """Simulated operations per host second."""
        return self.total_ops / self.host_seconds if self.host_seconds > 0 else 0.0

    @property
    def model_level(self) -> str:
        """The point-to-point rules and link sharing of the run (``model_level``)."""
        return model_level(self.protocol, self.contention) if self.protocol else ""

    @property
    def compute_source(self) -> str:
        """Where the run's compute times came from (``compute_source``)."""
        return compute_source(self.kernel_model, self.compute)

    def summary(self, warnings: bool = True) -> str:
        """A human-readable table: elapsed time and the calc/wait/comm breakdown, then the
        :meth:`warning_lines` (unless *warnings* is False: ``bsim run`` prints those on
        standard error, where ``--quiet`` does not hide them)."""
        out = io.StringIO()
        spawned = (f" ({self.ranks - self.spawned} launched, {self.spawned} spawned)"
                   if self.spawned else "")
        out.write(f"bsim prediction: {self.program or 'program'} on {self.ranks} ranks"
                  f"{spawned}\n")
        if self.model_level:
            out.write(f"  model     {self.model_level}\n")
        if not self.kernel_model:
            out.write(f"  calc from {self.compute_source}\n")
        if self.machine:
            out.write(f"  machine   {self.machine}\n")
        for note in self.notes:
            out.write(f"  note      {note}\n")
        if self.kernel_model:
            out.write(f"  kernels   {self.kernel_model}\n")
        if self.node:
            out.write(f"  node      {self.node}\n")
        if self.layout:
            out.write(f"  placed    {self.layout_line()}\n")
        if self.compute:
            out.write(f"  compute   {self.compute} (host time between MPI calls, scaled)\n")
        if self.noise:
            out.write(f"  noise     {self.noise}\n")
        if self.network:
            out.write(f"  network   {self.network}\n  protocol  {self.protocol}\n")
            if self.collectives:
                out.write(f"  collectives {self.collectives}\n")
            if self.collective_algorithms:
                out.write(f"  algorithms  {self.algorithms_line()}\n")
            if self.contention != "none":
                out.write(f"  contention {self.contention}\n")
        if self.filesystem:
            out.write(f"  filesystem {self.filesystem}\n")
        if self.params:
            out.write("  params    " + ", ".join(f"{k}={v}" for k, v in self.params.items())
                      + "\n")
        out.write(f"  elapsed   {_fmt_time(self.elapsed)}  (latest rank finish)\n")
        if self.flops and self.elapsed > 0:
            rate = self.flops / self.elapsed
            share = f" = {rate / self.peak_flops:.1%} of peak" if self.peak_flops else ""
            out.write(f"  achieved  {rate / 1e9:.4g} GFlop/s{share}\n")
        out.write("\n")
        out.write(f"  {'':8}{'mean':>12}{'min':>12}{'max':>12}{'% of elapsed':>14}\n")
        el = self.elapsed or 1.0
        for label, arr in (("calc", self.calc), ("wait", self.wait), ("comm", self.comm),
                           ("finish", self.finish)):
            out.write(f"  {label:<8}{_fmt_time(arr.mean()):>12}{_fmt_time(arr.min()):>12}"
                      f"{_fmt_time(arr.max()):>12}{100 * arr.mean() / el:>13.1f}%\n")
        out.write(f"\n  operations {self.total_ops:,}   messages "
                  f"{self.total_messages:,}   bytes {self.total_bytes:,}\n")
        if self.total_messages == 0 and float(self.comm.sum()) > 0:
            out.write("  (the comm time is collectives, charged by their cost model, not as "
                      "messages)\n")
        out.write(f"  host time {self.host_seconds:.3f} s   events {self.events:,}   "
                  f"{self.ops_per_second:,.0f} ops/s\n")
        if self.distributed:
            d = self.distributed
            out.write(f"  host processes {d['processes']} ({d['partition']})   windows "
                      f"{d['windows']:,}   events shipped {d['shipped']:,}\n")
        for line in self.warning_lines() if warnings else ():
            out.write(f"  warning: {line}\n")
        if self.formula_collectives:
            out.write(f"  warning: {self.formula_warning()}\n")
        if self.inert:
            out.write(f"  warning: network settings with no effect in this run: "
                      f"{'; '.join(self.inert)}\n")
        return out.getvalue()

    def layout_line(self) -> str:
        """``16 ranks on 2 nodes; devices 0-7, NICs 0-3 a node; rank 0: device 0, NIC 0;
        ...``: where the ranks ran (the first four)."""
        lay = self.layout
        nodes, devices, nics = lay["node"], lay["device"], lay["nic"]
        first = "; ".join(f"rank {r}: node {nodes[r]}, device {devices[r]}, NIC {nics[r]}"
                          for r in range(min(4, len(nodes))))
        return (f"{len(nodes):,} ranks on {len(set(nodes)):,} nodes, devices "
                f"{min(devices)}-{max(devices)}, NICs {min(nics)}-{max(nics)} a node; "
                f"{first}{'; ...' if len(nodes) > 4 else ''}")

    def algorithms_line(self) -> str:
        """``allreduce rabenseifner 1, recursive_doubling 2; bcast binomial 4``: each op's
        collective algorithms and how many calls each shaped."""
        return "; ".join(f"{op} " + ", ".join(f"{alg} {n:,}" for alg, n in algs.items())
                         for op, algs in self.collective_algorithms.items())

    def formula_warning(self) -> str:
        """One line: collectives priced without the contention or noise the run models."""
        what = " and ".join(x for x, on in (("contention", self.contention != "none"),
                                            ("network noise", " + net:" in self.network)) if on)
        return (f"{self.formula_collectives:,} collective calls were priced by formulas, "
                f"without the {what or 'network effects'} this run models (--collectives "
                f"algorithmic sends blocking collectives' messages through the network; "
                f"nonblocking ones stay formulas)")

    def warning_lines(self) -> list[str]:
        """What the program left undone, one line each: requests never completed,
        messages never received (empty when nothing was)."""
        return ([self.pending_warning()] if self.pending_requests else []) + \
            ([self.unreceived_warning()] if self.unreceived else [])

    def unreceived_warning(self) -> str:
        """One line: how many messages were never received, by which ranks (first 8)."""
        total, ranks = _per_rank_counts(self.unreceived)
        first = f" (the first: {self.unreceived_first})" if self.unreceived_first else ""
        return (f"{total:,} messages sent were never received, by rank(s) {ranks}: their "
                f"sends completed, their receives are missing{first}")

    def pending_warning(self) -> str:
        """One line: how many requests were left pending, on which ranks (first 8)."""
        total, ranks = _per_rank_counts(self.pending_requests)
        first = f" (e.g. {self.pending_first})" if self.pending_first else ""
        return (f"{total:,} nonblocking requests never completed (Wait/Test) nor freed, on "
                f"rank(s) {ranks}{first}")

    # -- serialisation --------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; floats are exact (Python's shortest round-trip repr)."""
        return {
            "format": FORMAT,
            "bsim_version": self.version,
            "program": self.program,
            **({"machine": self.machine} if self.machine else {}),
            **({"kernel_model": self.kernel_model} if self.kernel_model else {}),
            **({"compute": self.compute} if self.compute else {}),
            **({"node": self.node} if self.node else {}),
            **({"layout": self.layout} if self.layout else {}),
            "ranks": self.ranks,
            **({"spawned": self.spawned} if self.spawned else {}),
            **({"formula_collectives": self.formula_collectives}
               if self.formula_collectives else {}),
            **({"inert_settings": list(self.inert)} if self.inert else {}),
            **({"notes": list(self.notes)} if self.notes else {}),
            **({"collective_algorithms": self.collective_algorithms}
               if self.collective_algorithms else {}),
            **({"modules": self.modules} if self.modules else {}),
            **({"inputs": self.inputs} if self.inputs else {}),
            **({"calibration_flags": self.calibration_flags} if self.calibration_flags
               else {}),
            "network": self.network,
            "protocol": self.protocol,
            **({"model_level": self.model_level} if self.protocol else {}),
            "compute_source": self.compute_source,
            "collectives": self.collectives,
            "contention": self.contention,
            "params": self.params,
            "elapsed": self.elapsed,
            "totals": {
                "calc": float(self.calc.sum()), "wait": float(self.wait.sum()),
                "comm": float(self.comm.sum()), "ops": self.total_ops,
                "messages": self.total_messages, "bytes": self.total_bytes,
            },
            "per_rank": {
                "finish": self.finish.tolist(), "calc": self.calc.tolist(),
                "wait": self.wait.tolist(), "comm": self.comm.tolist(),
                "ops": self.ops.tolist(), "messages": self.messages.tolist(),
                "bytes": self.bytes.tolist(),
            },
            **({"noise": self.noise} if self.noise else {}),
            **({"filesystem": self.filesystem} if self.filesystem else {}),
            **({"flops": self.flops} if self.flops else {}),
            **({"peak_flops": self.peak_flops} if self.peak_flops else {}),
            **({"pending_requests": {str(r): n for r, n in sorted(self.pending_requests.items())}}
               if self.pending_requests else {}),
            **({"unreceived": {str(r): n for r, n in sorted(self.unreceived.items())}}
               if self.unreceived else {}),
            "host": {"seconds": self.host_seconds, "events": self.events,
                     "ops_per_second": self.ops_per_second,
                     **({"distributed": self.distributed} if self.distributed else {})},
        }

    def to_json(self, path: str | Path) -> Path:
        """Write the result as JSON (atomically)."""
        return atomic_write_text(path, self.json_text())

    def json_text(self) -> str:
        """The JSON document :meth:`to_json` writes."""
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def to_csv(self, path: str | Path) -> Path:
        """Write one row per rank: rank, finish, calc, wait, comm, ops, messages, bytes."""
        return atomic_write_text(path, self.csv_text())

    def csv_text(self) -> str:
        """The CSV document :meth:`to_csv` writes."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["rank", "finish", "calc", "wait", "comm", "ops", "messages", "bytes"])
        for r in range(self.ranks):
            w.writerow([r, repr(float(self.finish[r])), repr(float(self.calc[r])),
                        repr(float(self.wait[r])), repr(float(self.comm[r])),
                        int(self.ops[r]), int(self.messages[r]), int(self.bytes[r])])
        return buf.getvalue()

    def to_dataframe(self) -> Any:
        """One row per rank (index ``rank``): finish, calc, wait, comm, ops, messages, bytes.

        A ``pandas.DataFrame`` (the optional extra ``bsim[data]``); what shaped the
        prediction (program, ranks, machine, network, protocol, contention,
        collectives and their algorithms, noise, kernel model, compute, version, elapsed)
        is in ``df.attrs``.
        Raises ``ImportError`` naming the extra when pandas is missing.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Result.to_dataframe needs pandas: pip install 'bsim[data]' "
                              "(or pip install pandas)") from None
        df = pd.DataFrame({"finish": self.finish, "calc": self.calc, "wait": self.wait,
                           "comm": self.comm, "ops": self.ops, "messages": self.messages,
                           "bytes": self.bytes})
        df.index.name = "rank"
        df.attrs.update(program=self.program, ranks=self.ranks, machine=self.machine,
                        network=self.network, protocol=self.protocol,
                        contention=self.contention, collectives=self.collectives,
                        noise=self.noise, kernel_model=self.kernel_model,
                        compute=self.compute,
                        bsim_version=self.version, elapsed=self.elapsed,
                        params=dict(self.params),
                        collective_algorithms={op: dict(algs) for op, algs
                                               in self.collective_algorithms.items()})
        return df

    def _repr_html_(self) -> str:
        """The summary as preformatted HTML (Jupyter's display of a result)."""
        import html
        return f"<pre>{html.escape(self.summary())}</pre>"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """Rebuild a result from :meth:`to_dict` output."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not a bsim result (format {data.get('format')!r}, "
                             f"expected {FORMAT!r})")
        pr = data["per_rank"]
        host = data.get("host", {})
        return cls(
            ranks=data["ranks"], finish=np.array(pr["finish"], float),
            calc=np.array(pr["calc"], float), wait=np.array(pr["wait"], float),
            comm=np.array(pr["comm"], float), ops=np.array(pr["ops"], np.int64),
            messages=np.array(pr["messages"], np.int64), bytes=np.array(pr["bytes"], np.int64),
            network=data.get("network", ""), protocol=data.get("protocol", ""),
            collectives=data.get("collectives", ""),
            contention=data.get("contention", "none"),
            program=data.get("program", ""), params=data.get("params", {}),
            events=host.get("events", 0), host_seconds=host.get("seconds", 0.0),
            distributed=host.get("distributed", {}), noise=data.get("noise", ""),
            filesystem=data.get("filesystem", ""),
            machine=data.get("machine", ""), kernel_model=data.get("kernel_model", ""),
            compute=data.get("compute", ""), notes=list(data.get("notes", [])),
            node=data.get("node", ""),
            layout={k: list(v) for k, v in data.get("layout", {}).items()},
            flops=data.get("flops", 0.0), peak_flops=data.get("peak_flops", 0.0),
            version=data.get("bsim_version", ""),
            pending_requests={int(r): n for r, n in data.get("pending_requests", {}).items()},
            unreceived={int(r): n for r, n in data.get("unreceived", {}).items()},
            spawned=data.get("spawned", 0),
            formula_collectives=data.get("formula_collectives", 0),
            collective_algorithms=data.get("collective_algorithms", {}),
            inert=list(data.get("inert_settings", [])), modules=data.get("modules", ""),
            inputs=dict(data.get("inputs", {})),
            calibration_flags={k: list(v) for k, v in data.get("calibration_flags", {}).items()})

    @classmethod
    def from_json(cls, path: str | Path) -> Result:
        """Read a result written by :meth:`to_json`."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def __repr__(self) -> str:
        return (f"<Result ranks={self.ranks} elapsed={self.elapsed:.6g}s "
                f"ops={self.total_ops} host={self.host_seconds:.3f}s>")


def _per_rank_counts(counts: dict[int, int]) -> tuple[int, str]:
    """The total of *counts* and ``"r (n), ..."`` for the first 8 ranks (then how many more)."""
    ranks = sorted(counts)
    shown = ", ".join(f"{r} ({counts[r]})" for r in ranks[:8])
    more = f" and {len(ranks) - 8} more ranks" if len(ranks) > 8 else ""
    return sum(counts.values()), shown + more


def compute_spec(compute: str, scale: float = 1.0) -> str:
    """What :attr:`Result.compute` records for ``simulate(compute=..., compute_scale=...)``.

    ``"measure:scale=X"`` when host time between MPI calls, times *scale*, was
    charged as calc; ``""`` otherwise (only ``add_time`` and the kernel model).
    """
    return f"measure:scale={float(scale)!r}" if compute == "measure" else ""


def _fmt_time(seconds: float) -> str:
    s = float(seconds)
    if s == 0:
        return "0 s"
    a = abs(s)
    if a >= 1:
        return f"{s:.4f} s"
    if a >= 1e-3:
        return f"{s * 1e3:.4f} ms"
    if a >= 1e-6:
        return f"{s * 1e6:.4f} us"
    return f"{s * 1e9:.4f} ns"


def recorded_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """What ``simulate(main, args=..., kwargs=...)`` records as the run's ``params`` when
    the caller names none: the keyword arguments, and the positional ones as ``args``;
    a value that is not a JSON scalar is recorded by its type (``"<ndarray>"``), so two
    runs record the same thing for the same kind of input."""
    def scalar(value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        return f"<{type(value).__name__}>"
    out = {"args": [scalar(v) for v in args]} if args and "args" not in kwargs else {}
    out.update((str(k), scalar(v)) for k, v in kwargs.items())
    return out
