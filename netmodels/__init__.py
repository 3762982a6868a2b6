"""Network, topology, mapping and collective-cost models for bsim.

Every model implements :class:`netmodels.base.NetworkModel`; build one from a
spec string with :func:`build_network` (``"hockney:latency=1e-6,bandwidth=1e9"``)
or directly (``Hockney(latency=1e-6, bandwidth=1e9)``).
"""

from __future__ import annotations

from .base import (
    REGISTRY,
    NetworkModel,
    NetworkSpecError,
    build_network,
    describe_networks,
    register,
)
from .flat import Hockney, LogGP, Zero
from .spec import parse_spec

__all__ = [
    "REGISTRY", "NetworkModel", "NetworkSpecError", "register",
    "Hockney", "LogGP", "Zero",
    "build_network", "describe_networks", "parse_spec",
]

# topologies
from .bluewaters import BlueWaters, GridMapping2D, percs_cost  # noqa: E402
from .dragonfly import Dragonfly  # noqa: E402
from .fattree import FatTree  # noqa: E402
from .graph import GraphNetwork  # noqa: E402
from .layouts import NodeVolumeMapping, isp, node_shapes, ssn  # noqa: E402
from .mapping import (  # noqa: E402
    BlockMapping,
    ExplicitMapping,
    Mapping,
    MappingError,
    RoundRobinMapping,
    build_mapping,
)
from .maxmin import FluidNetwork, max_min_rates, simulate_flows  # noqa: E402
from .piecewise import LogGPRanges, Piecewise, TwoLevel  # noqa: E402
from .torus import Torus  # noqa: E402

__all__ += [
    "Piecewise", "LogGPRanges", "TwoLevel",
    "Torus", "FatTree", "Dragonfly", "GraphNetwork", "BlueWaters", "GridMapping2D", "percs_cost",
    "FluidNetwork", "max_min_rates", "simulate_flows",
    "Mapping", "MappingError", "BlockMapping", "RoundRobinMapping", "ExplicitMapping",
    "build_mapping", "NodeVolumeMapping", "isp", "ssn", "node_shapes",
]
