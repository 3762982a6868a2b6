"""The peak check: a prediction whose compute is faster than the hardware is refused.

:func:`check_peak` records a run's flops and the peak of the nodes its ranks ran on
(``Result.flops``, ``Result.peak_flops``) and raises :class:`~bsim.errors.AbovePeakError`
when the flops do not fit in the ranks' modelled compute time at their share of their node's
peak, in total or in one kernel a skeleton counts apart (``docs/machines.md``, "Never above
peak").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AbovePeakError

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from ..outputs.result import Result
    from . import Machine

__all__ = ["check_peak", "KERNEL_FLOPS"]

KERNEL_FLOPS = "kernel_flops"
"""The key of a rank's returned dict holding ``{kernel: (flops, modelled seconds)}``."""


def check_peak(result: Result, flops: float, preset: Machine | None,
               network: NetworkModel, excess: Mapping[int, float] | None = None) -> None:
    """Record the achieved rate and the peak of the nodes the ranks ran on; refuse a
    prediction whose compute is faster than the hardware (``docs/machines.md``).

    A rank's share of peak is its node's peak, ``peak_flops_per_core * cores_per_node``,
    over the ranks placed on that node: by the run's network when it places ranks on
    nodes (its ``cores`` and mapping, whatever the preset's network says), else by the
    preset's ranks per node.  The flops were computed in the ranks' modelled compute
    time ``model_r = calc_r - excess_r`` (*excess*: the OS noise's stretch and the
    measured host time, ``Engine.calc_excess``, which are not the program's kernels), so
    ``flops <= sum over ranks of model_r * share_r`` must hold (a bound on the rate while
    computing, not diluted by communication or noise); it implies ``flops / elapsed <=
    the nodes' peak``, the rate the summary shows against ``peak_flops``.  A skeleton that
    returns per-kernel counts (``{KERNEL_FLOPS: {kernel: (flops_r, seconds_r)}}`` in each
    rank's dict, seconds as passed to ``add_time``) is checked per kernel too:
    ``sum_r flops_r <= sum_r seconds_r * share_r`` for each, so a slow kernel cannot
    hide a fast one.
    """
    result.flops = flops
    if preset is None or preset.peak_flops_per_core is None:
        return
    shares, layout = _shares(result, preset, network)
    calc = np.asarray(result.calc, dtype=float).copy()
    for rank, extra in (excess or {}).items():
        if 0 <= rank < calc.size:
            calc[rank] = max(0.0, calc[rank] - extra)
    bound = float(np.dot(calc, shares))
    if flops > bound * (1 + 1e-9):
        rate = "inf" if bound <= 0 else f"{flops / bound:.4g}x"
        noted = " (modelled: noise and measured host time left out)" if excess else ""
        raise AbovePeakError(
            f"{result.program} on {result.machine}: the prediction computes {flops:.4g} flop "
            f"in {float(np.sum(calc)):.4g} s of compute time{noted}, {rate} what the "
            f"hardware can in that time ({layout}, above the machine's peak "
            f"{result.peak_flops / 1e9:.4g} GFlop/s); its kernel model "
            f"({result.kernel_model or 'the program defaults'}) is faster than the hardware")
    for kernel, (kflops, bound) in _kernel_bounds(result.returns, shares).items():
        if kflops > bound * (1 + 1e-9):
            rate = "inf" if bound <= 0 else f"{kflops / bound:.4g}x"
            raise AbovePeakError(
                f"{result.program} on {result.machine}: its {kernel} kernel computes "
                f"{kflops:.4g} flop in compute time worth {bound:.4g} flop at the ranks' "
                f"share of peak, {rate} what the hardware can ({layout}, peak "
                f"{result.peak_flops / 1e9:.4g} GFlop/s); that kernel's time "
                f"({result.kernel_model or 'the program defaults'}) is faster than the "
                f"hardware, whatever the other kernels take")


def _shares(result: Result, preset: Machine, network: NetworkModel
            ) -> tuple[np.ndarray, str]:
    """Each rank's share of its node's peak (flop/s) and a description of the layout;
    sets ``result.peak_flops`` (the peak of the nodes the ranks ran on)."""
    assert preset.peak_flops_per_core is not None
    node_peak = preset.peak_flops_per_core * preset.cores_per_node
    n = result.ranks
    placed = network.placement()
    if placed is not None and len(placed) >= n:
        nodes = list(placed[:n])
        per_node: dict[int, int] = {}
        for node in nodes:
            per_node[node] = per_node.get(node, 0) + 1
        shares = np.array([node_peak / per_node[node] for node in nodes])
        result.peak_flops = len(per_node) * node_peak
        return shares, f"{n} ranks on {len(per_node)} nodes of {node_peak / 1e9:.4g} GFlop/s"
    shares = np.full(n, node_peak / preset.ranks_per_node)
    result.peak_flops = n * float(shares[0])   # ranks x peak_flops_per_rank
    return shares, (f"{n} ranks x {shares[0] / 1e9:.4g} GFlop/s, {preset.ranks_per_node} "
                    f"a node")


def _kernel_bounds(returns: list[Any], shares: np.ndarray) -> dict[str, tuple[float, float]]:
    """``{kernel: (sum_r flops_r, sum_r seconds_r * share_r)}`` over the ranks whose
    returned dict holds ``KERNEL_FLOPS`` (``{kernel: (flops, modelled seconds)}``)."""
    out: dict[str, tuple[float, float]] = {}
    for rank, ret in enumerate(returns[:shares.size]):
        counts = ret.get(KERNEL_FLOPS) if isinstance(ret, dict) else None
        if not isinstance(counts, dict):
            continue
        for kernel, (kflops, seconds) in counts.items():
            f, b = out.get(kernel, (0.0, 0.0))
            out[kernel] = (f + float(kflops), b + float(seconds) * float(shares[rank]))
    return out
