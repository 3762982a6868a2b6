"""Turn a network calibration into profile tables and the measurements CSV.

``[network]`` is the Hockney fit of the inter-node pair if one was measured,
else of the intra-node pair; every fit of every pair becomes a
``[network_variants.*]`` table (``hockney_intra``, ``piecewise_intra``,
``loggp_intra``, ``loggp_intra_small|medium|large`` and, when the machine
loader knows the model, ``loggp_ranges_intra``); fit quality and the run's
facts go to ``calibration_*`` keys of ``[hardware]``.  The variants and keys of
:func:`owned_variants` and :func:`owned_hardware` that this run did not produce
are listed under ``remove``: an earlier run's, they would be stale.
"""

from __future__ import annotations

import csv
import datetime
import io
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .quality import residual_text
from .sampling import mpi_library

if TYPE_CHECKING:
    from .network_bench import NetworkCalibration, PairResult

__all__ = ["csv_rows", "profile_parts", "owned_variants", "owned_hardware"]

_RANGE_NAMES = {1: ("",), 2: ("small", "large"), 3: ("small", "medium", "large")}
PAIRS = ("intra", "inter")


def owned_variants() -> list[str]:
    """Every ``[network_variants.*]`` name ``calibrate network`` can write."""
    return [name for kind in PAIRS for name in (
        f"hockney_{kind}", f"piecewise_{kind}", f"loggp_{kind}", f"loggp_ranges_{kind}",
        *(f"loggp_{kind}_{r}" for r in ("small", "medium", "large")))]


def owned_hardware() -> list[str]:
    """Every ``[hardware]`` key ``calibrate network`` can write."""
    return [f"calibration_{kind}_{what}" for kind in PAIRS for what in (
        "latency_var", "bandwidth_var", "hockney_rel_residual", "flags")] + [
        "calibration_host", "calibration_mpi", "calibration_date", "calibration_nodes",
        "calibration_ranks_per_node", "calibration_primary_pair", "calibration_network_data"]


def csv_rows(results: dict[str, PairResult]) -> str:
    """The measurements CSV: one row per pair, measure and size, with all statistics."""
    buf = io.StringIO()
    cols = ["pair", "ranks", "measure", "nbytes", "messages", "delay", "inner", "n", "median",
            "q1", "q3", "mad", "min", "max", "mean", "outliers", "ci_low", "ci_high"]
    w = csv.DictWriter(buf, cols, lineterminator="\n")
    w.writeheader()
    for kind, res in results.items():
        ranks = f"{res.ranks[0]}-{res.ranks[1]}"
        for i, s in enumerate(res.sizes):
            rows = [("pingpong", 1, 0.0, res.inner[i], res.pingpong[i])]
            if res.streamd:
                rows += [("stream", 1, 0.0, 1, res.stream1[i]),
                         ("stream", res.count, 0.0, 1, res.streamn[i]),
                         ("stream", res.count, res.delays[i], 1, res.streamd[i])]
            for measure, msgs, delay, inner, summ in rows:
                w.writerow({"pair": kind, "ranks": ranks, "measure": measure, "nbytes": s,
                            "messages": msgs, "delay": delay, "inner": inner, **summ.row()})
    return buf.getvalue()


def _loader_accepts(model: str) -> bool:
    """Whether ``bsim.machines`` accepts *model* in a network table (newer loaders do)."""
    try:
        from bsim.machines import NETWORK_MODELS
    except ImportError:
        return False
    return model in NETWORK_MODELS


def profile_parts(cal: NetworkCalibration, data: Path | None, name: str | None,
                  cores_per_node: int | None) -> dict[str, Any]:
    """Top-level keys, ``[network]``, variants, ``[hardware]`` keys and comments."""
    primary = "inter" if "inter" in cal.fits else "intra"
    variants: dict[str, Any] = {}
    comments: dict[str, str] = {}
    hw: dict[str, Any] = {}
    for kind, fits in cal.fits.items():
        res = cal.results[kind]
        variants[f"hockney_{kind}"] = fits.hockney.table()
        comments[f"network_variants.hockney_{kind}"] = (
            f"Hockney fit of {kind}-node ping-pong, ranks {res.ranks[0]}-{res.ranks[1]}, "
            f"sizes {res.sizes[0]}..{res.sizes[-1]} B")
        hw[f"calibration_{kind}_latency_var"] = fits.hockney.latency_var
        hw[f"calibration_{kind}_bandwidth_var"] = fits.hockney.bandwidth_var
        hw[f"calibration_{kind}_hockney_rel_residual"] = fits.hockney.rel_residual
        hw[f"calibration_{kind}_flags"] = list(fits.flags)   # bsim/calibration/quality.py
        if fits.piecewise:
            variants[f"piecewise_{kind}"] = fits.piecewise.table()
            comments[f"network_variants.piecewise_{kind}"] = (
                "three-piece Tmsg(L) (modeling tutorial): t0[i] + L*tb[i] up to breaks[i] bytes; "
                f"{residual_text(fits.piecewise.rel_residual, fits.piecewise.dof, '.3g')}")
        if fits.loggp_all:
            variants[f"loggp_{kind}"] = fits.loggp_all.table()
            comments[f"network_variants.loggp_{kind}"] = (
                f"LogGP over all sizes ({kind}), PRTT differences; "
                f"{residual_text(fits.loggp_all.rel_residual, fits.loggp_all.dof, '.3g')}")
        if len(fits.loggp) > 1 and fits.piecewise and _loader_accepts("loggp_ranges"):
            variants[f"loggp_ranges_{kind}"] = {
                "model": "loggp_ranges", "breaks": "/".join(map(str, fits.piecewise.breaks)),
                **{k: "/".join(repr(float(getattr(r, k))) for r in fits.loggp)
                   for k in ("L", "o", "g", "G")}}
            comments[f"network_variants.loggp_ranges_{kind}"] = (
                f"the LogGP ranges below as one size-ranged model ({kind})")
        if len(fits.loggp) > 1:
            for rname, r in zip(_RANGE_NAMES[len(fits.loggp)], fits.loggp, strict=True):
                variants[f"loggp_{kind}_{rname}"] = r.table()
                comments[f"network_variants.loggp_{kind}_{rname}"] = (
                    f"LogGP {kind}, {r.describe()}; "
                    f"{residual_text(r.rel_residual, r.dof, '.3g')}")
    for key in ("latency", "bandwidth"):
        comments[f"network.{key}"] = f"{primary}-node Hockney fit"
    host = socket.gethostname()
    date = datetime.date.today().isoformat()
    lib = mpi_library()
    hw.update({"calibration_host": host, "calibration_mpi": lib, "calibration_date": date,
               "calibration_nodes": len(cal.ranks_per_node),
               "calibration_ranks_per_node": max(cal.ranks_per_node),
               "calibration_primary_pair": primary})
    if data is not None:
        hw["calibration_network_data"] = str(data.resolve())
    top: dict[str, Any] = {"source": f"bsim calibrate network on {host}, {lib}, {date}"}
    if name:
        top["name"] = name
    if cores_per_node:
        top["cores_per_node"] = cores_per_node
    stale = {"network_variants": [v for v in owned_variants() if v not in variants],
             "hardware": [k for k in owned_hardware() if k not in hw]}
    return {"top": top, "network": cal.fits[primary].hockney.table(), "variants": variants,
            "hardware": hw, "comments": comments, "remove": stale,
            "defaults": {"name": name or host.split(".")[0],
                         "description": f"{host}: measured with bsim calibrate network",
                         "cores_per_node": max(cal.ranks_per_node)}}
