"""The peak check: a prediction whose compute is faster than the hardware is refused.

:func:`check_peak` records a run's flops and the peak of the nodes its ranks ran on
(``Result.flops``, ``Result.peak_flops``) and raises :class:`~bsim.errors.AbovePeakError`
when the flops do not fit in the ranks' compute time at their share of their node's peak
(``docs/machines.md``, "Never above peak").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import AbovePeakError

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from ..outputs.result import Result
    from . import Machine

__all__ = ["check_peak"]


def check_peak(result: Result, flops: float, preset: Machine | None,
               network: NetworkModel) -> None:
    """Record the achieved rate and the peak of the nodes the ranks ran on; refuse a
    prediction whose compute is faster than the hardware (``docs/machines.md``).

    A rank's share of peak is its node's peak, ``peak_flops_per_core * cores_per_node``,
    over the ranks placed on that node: by the run's network when it places ranks on
    nodes (its ``cores`` and mapping, whatever the preset's network says), else by the
    preset's ranks per node.  The flops were computed in the ranks' compute time, so
    ``flops <= sum over ranks of calc_r * share_r`` must hold (a bound on the rate while
    computing, not diluted by communication); it implies ``flops / elapsed <= the
    nodes' peak``, the rate the summary shows against ``peak_flops``.
    """
    result.flops = flops
    if preset is None or preset.peak_flops_per_core is None:
        return
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
        layout = f"{n} ranks on {len(per_node)} nodes of {node_peak / 1e9:.4g} GFlop/s"
    else:
        shares = np.full(n, node_peak / preset.ranks_per_node)
        result.peak_flops = n * float(shares[0])   # ranks x peak_flops_per_rank
        layout = f"{n} ranks x {shares[0] / 1e9:.4g} GFlop/s, {preset.ranks_per_node} a node"
    bound = float(np.dot(np.asarray(result.calc, dtype=float), shares))
    if flops > bound * (1 + 1e-9):
        rate = "inf" if bound <= 0 else f"{flops / bound:.4g}x"
        raise AbovePeakError(
            f"{result.program} on {result.machine}: the prediction computes {flops:.4g} flop "
            f"in {float(np.sum(result.calc)):.4g} s of compute time, {rate} what the "
            f"hardware can in that time ({layout}, above the machine's peak "
            f"{result.peak_flops / 1e9:.4g} GFlop/s); its kernel model "
            f"({result.kernel_model or 'the program defaults'}) is faster than the hardware")
