"""A run's ranks on a machine's nodes: a network given beside ``--machine``, and the node count.

A machine file's own network tables get ``cores = cores_per_node`` when they omit ``cores``
and may not say more (``_with_cores``).  :func:`network_on_machine` does the same for a
network given beside the machine (``bsim run --machine M --network SPEC``,
``simulate(machine=M, network=SPEC)``), then refuses more ranks than the machine has places
for: ``[hardware] nodes`` x the ranks the network puts on a node (``docs/machines.md``,
"Nodes and cores")::

    >>> from bsim.machines import load_machine
    >>> network_on_machine(load_machine("bgp"), "torus:dims=2x2x1", 16)
    'torus:dims=2x2x1,cores=4'
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING, Any

from netmodels.base import NetworkModel, NetworkSpecError
from netmodels.spec import parse_spec

from . import MachineError, _with_cores
from . import network_spec as machine_network
from .schema import NODE_NETWORK_KEYS, RANKS_PER_NODE

if TYPE_CHECKING:
    from . import Machine

__all__ = ["network_on_machine", "FittedAtOtherCountWarning", "record_nodes"]

_FITTED_AT = re.compile(r"p(\d+)(_max)?")


class FittedAtOtherCountWarning(UserWarning):
    """A network variant fitted at one process count runs at another."""


def _check_fitted_count(preset: Machine, ranks: int) -> None:
    """Warn when a variant ``pN``/``pN_max`` (the MILC paper's effective network observed
    at ``P = N``, congestion included: Sec. IV) runs at another rank count: its latency
    and bandwidth describe that run, not this one."""
    found = _FITTED_AT.fullmatch(preset.variant or "")
    if found is not None and int(found.group(1)) != ranks:
        warnings.warn(f"{preset.label}: the network variant {preset.variant!r} was fitted "
                      f"at {int(found.group(1)):,} processes (the MILC paper, Sec. IV); this "
                      f"run has {ranks:,} ranks, where it may not hold",
                      FittedAtOtherCountWarning, stacklevel=3)


def _with_node(preset: Machine, network: str, model: str, items: dict[str, object]) -> str:
    """*network* with the machine's ``[node]`` devices and NICs (``nics``, ``devices``,
    ``nic_policy``, ``device_latency``, ``device_bandwidth``) for a topology model, each
    unless the spec gives it."""
    from netmodels import REGISTRY
    cls = REGISTRY.get(model)
    if cls is None or "devices" not in cls.parameters:
        return network
    extra = [f"{k}={preset.node[k]}" for k in NODE_NETWORK_KEYS
             if k in preset.node and k not in items]
    if extra:
        network += f"{',' if ':' in network else ':'}{','.join(extra)}"
    return network


def network_on_machine(preset: Machine, network: str | NetworkModel | None,
                       ranks: int) -> str | NetworkModel | None:
    """*network* (a spec, a model or None: the machine's own) placed on *preset*'s nodes.

    A spec of a model that takes ``cores`` gets ``,cores=<cores_per_node>`` unless it says
    ``cores``; a spec or a model placing more ranks on a node than it has cores is refused
    (a model built by the caller is taken as built).  With ``[hardware] nodes``, more
    *ranks* than ``nodes`` x the ranks a node (the network's ``cores``, else the machine's
    :attr:`~bsim.machines.Machine.ranks_per_node`) are refused.  Each refusal is one
    :class:`MachineError` line naming the machine.
    """
    if network is None or network == machine_network(preset):   # the variant's own
        _check_fitted_count(preset, ranks)
    cpn = preset.cores_per_node
    cores = getattr(network, "cores", None)
    if isinstance(network, str):
        model, items = parse_spec(network, "network spec", NetworkSpecError)
        try:
            cores = _with_cores(preset, {"model": model, **items}, None).get("cores")
        except MachineError:   # above cores_per_node, or not an int: refused below
            cores = items.get("cores", items.get(RANKS_PER_NODE))
        if cores is not None and "cores" not in items:
            network += f"{',' if ':' in network else ':'}cores={cores}"
        network = _with_node(preset, network, model, items)
    if cores is not None and not (isinstance(cores, int) and 1 <= cores <= cpn):
        spec = network.spec() if isinstance(network, NetworkModel) else network
        if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
            raise MachineError(f"network {spec!r} on {preset.label}: cores = {cores!r}: "
                               f"expected a whole number of ranks a node, 1 to {cpn}")
        raise MachineError(f"{preset.label} has {cpn} cores per node; network {spec!r} "
                           f"places {cores!r} ranks on each node")
    per_node = cores if isinstance(cores, int) else preset.ranks_per_node
    nodes = preset.hardware.get("nodes")
    if nodes is None:
        return network
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        raise MachineError(f"{preset.label}: [hardware] nodes = {nodes!r}: expected an int "
                           f">= 1 (the machine's node count)")
    if ranks > nodes * per_node:
        what = "cores" if per_node == cpn else "places for ranks"
        raise MachineError(f"{preset.label} has {nodes * per_node:,} {what} ({nodes:,} nodes "
                           f"x {per_node}); {ranks:,} ranks do not fit")
    return network


def record_nodes(result: Any, preset: Machine | None, net: NetworkModel) -> None:
    """The machine's node make-up (``Result.node``) and each rank's node, device and NIC
    (``Result.layout``, when the network has a node layer: ``netmodels/nodes.py``)."""
    if preset is not None:
        result.node = preset.node_make_up()
    layout = getattr(getattr(net, "inner", net), "rank_layout", None)
    placed = layout() if callable(layout) else None
    if placed:
        result.layout = {k: v[:result.ranks] for k, v in placed.items()}
