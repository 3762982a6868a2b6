"""The interface between the engine and every network model.

A network model answers one question for the engine: how long does a message of
``nbytes`` from world rank ``src`` to world rank ``dst`` take?  It answers it in
two shapes, one per point-to-point protocol (see ``docs/protocols.md``):

* ``cost(src, dst, nbytes)``: the whole end-to-end time of one message, charged
  at the receiver by the ``bsim`` protocol (BSIM paper: ``l + s/w``).
* the LogGP decomposition used by the ``loggp`` protocol:
  ``send_overhead`` (o_s, CPU time of the sender), ``gap`` (how long the
  sender's NIC is busy injecting the message; the next message of that NIC
  departs no earlier), ``wire`` (from the start of injection to the arrival of
  the last byte) and ``recv_overhead`` (o_r, CPU time of the receiver).

For every stateless model ``cost == send_overhead + wire + recv_overhead``, with the
overheads of the pair (``pair_send_overhead``, ``pair_recv_overhead``: the size's own
unless they depend on the ranks, as ``twolevel``'s intra- and inter-node rows do).

``min_cost()`` is a lower bound of ``cost`` over all pairs of distinct ranks
and all sizes: the lookahead of distributed runs.

Models are value objects built from keyword parameters and registered by name
so that ``"hockney:latency=1e-6,bandwidth=1e9"`` builds one (``netmodels.spec``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from .registry import Registry
from .spec import SpecError, parse_spec

__all__ = ["Rank", "SimTime", "NetworkModel", "NetworkSpecError", "REGISTRY", "register",
           "build_network", "describe_networks", "overhead_free"]

Rank = int
SimTime = float


class NetworkSpecError(SpecError):
    """A network name or parameter is unknown or out of range."""


REGISTRY: Registry[type[NetworkModel]] = Registry("network model", NetworkSpecError)


def register(cls: type[NetworkModel]) -> type[NetworkModel]:
    """Class decorator: make *cls* buildable by its ``name`` from a spec string."""
    return REGISTRY.register(cls)


class NetworkModel(ABC):
    """Base class of all network models.

    Subclasses set ``name`` (the spec-string name), ``parameters`` (parameter
    name -> one-line description with unit) and implement :meth:`cost`,
    :meth:`wire` and :meth:`min_cost`.  ``prepare(nranks)`` is called once by
    the engine before a run, so that models can build rank-dependent tables
    (mappings, routes).
    """

    name: ClassVar[str] = ""
    parameters: ClassVar[dict[str, str]] = {}
    #: why the model cannot be split over host processes ("" = it can: its answers
    #: depend only on the arguments, so every process computes the same ones)
    shared_state: ClassVar[str] = ""

    # -- lifecycle --------------------------------------------------------
    def prepare(self, nranks: int) -> None:
        """Bind the model to a run of *nranks* world ranks (default: nothing)."""

    def placement(self) -> list[int] | None:
        """The node of each rank after :meth:`prepare` (None: the model places no ranks)."""
        return None

    def place_more(self, nranks: int) -> None:
        """Place ranks added during the run (``MPI.Comm.Spawn``): :meth:`prepare` for
        *nranks* ranks, more than before, as long as every earlier rank keeps its node;
        :class:`NetworkSpecError` when the network has no room for them or its mapping
        would move the others (then the model is left as it was)."""
        before = self.placement()
        self.prepare(nranks)
        after = self.placement()
        if before is not None and (after is None or after[:len(before)] != before):
            self.prepare(len(before))
            raise NetworkSpecError(f"{self.name}: its mapping would move the run's ranks "
                                   f"to place {nranks} ranks")

    # -- the bsim protocol --------------------------------------------------
    @abstractmethod
    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        """End-to-end time of one uncontended message of *nbytes* bytes."""

    # -- the loggp protocol -------------------------------------------------
    def send_overhead(self, nbytes: int) -> SimTime:
        """CPU time the sender spends in the send call (LogGP ``o``)."""
        return 0.0

    def recv_overhead(self, nbytes: int) -> SimTime:
        """CPU time the receiver spends completing the receive (LogGP ``o``)."""
        return 0.0

    def pair_send_overhead(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        """``o_s`` of a message from *src* to *dst*: :meth:`send_overhead` unless a model's
        overheads depend on the pair (what the ``loggp`` protocol charges)."""
        return self.send_overhead(nbytes)

    def pair_recv_overhead(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        """``o_r`` of a message from *src* to *dst*: :meth:`recv_overhead` unless a model's
        overheads depend on the pair."""
        return self.recv_overhead(nbytes)

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        """Time the sender's NIC is busy with this message (LogGP ``max(g, (s-1)G)``)."""
        return 0.0

    def inert(self, contention: bool, protocol: str) -> list[str]:
        """Settings of this model that cannot act in a run with fluid *contention* (or
        not) under *protocol* (``"bsim"``, ``"loggp"``), each with why: a run warns of
        them rather than ignore them silently (default: none)."""
        return []

    @abstractmethod
    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        """Time from the start of injection to the arrival of the last byte."""

    # -- distributed runs ---------------------------------------------------
    @abstractmethod
    def min_cost(self) -> SimTime:
        """Lower bound of :meth:`cost` over all rank pairs and sizes (lookahead)."""

    def min_wire(self) -> SimTime:
        """Lower bound of :meth:`wire` over all pairs of distinct ranks and sizes.

        The lookahead of the ``loggp`` protocol.  Default: ``min_cost()`` when
        the model has no overheads (then ``wire == cost``), else 0 (unknown)
        unless a subclass knows better.
        """
        cls = type(self)
        if cls.send_overhead is NetworkModel.send_overhead and \
                cls.recv_overhead is NetworkModel.recv_overhead:
            return self.min_cost()
        return 0.0

    # -- presentation -----------------------------------------------------
    def params(self) -> dict[str, Any]:
        """The parameters this model was built with, by name."""
        return {k: getattr(self, k) for k in self.parameters}

    def spec(self) -> str:
        """The spec string that rebuilds this model."""
        args = ",".join(f"{k}={v}" for k, v in self.params().items())
        return f"{self.name}:{args}" if args else self.name

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params().items())
        return f"<{type(self).__name__} {args}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NetworkModel) and type(self) is type(other) \
            and self.params() == other.params()

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(map(str, self.params().items())))))


def check_nonnegative(model: str, **values: float) -> None:
    """Raise :class:`NetworkSpecError` unless every value is finite and >= 0."""
    for key, value in values.items():
        if (isinstance(value, bool) or not isinstance(value, (int, float))   # a bool is no number
                or not math.isfinite(value) or value < 0):
            raise NetworkSpecError(f"{model}: {key} must be a finite number >= 0, got {value!r}")


def check_positive(model: str, **values: float) -> None:
    """Raise :class:`NetworkSpecError` unless every value is finite and > 0."""
    for key, value in values.items():
        if (isinstance(value, bool) or not isinstance(value, (int, float))   # a bool is no number
                or not math.isfinite(value) or value <= 0):
            raise NetworkSpecError(f"{model}: {key} must be a finite number > 0, got {value!r}")


def build_network(spec: str | NetworkModel) -> NetworkModel:
    """Return *spec* itself if it is a model, else build the model it names."""
    if isinstance(spec, NetworkModel):
        return spec
    if not isinstance(spec, str):
        raise NetworkSpecError(f"network must be a spec string or a NetworkModel, got {spec!r}")
    name, kwargs = parse_spec(spec, "network spec", NetworkSpecError)
    cls = REGISTRY.lookup(name)
    REGISTRY.check_keys(name, kwargs, cls.parameters)
    # a topology's node layer (netmodels/nodes.py: nics, devices, ...) is set after it is
    # built, so that no topology's own __init__ needs to know those keys
    layer_keys = getattr(cls, "node_parameters", {})
    layer = {k: kwargs.pop(k) for k in list(kwargs) if k in layer_keys}
    try:
        model = cls(**kwargs)
    except TypeError as exc:  # wrong value types surface here
        raise NetworkSpecError(f"network model {name!r}: {exc}") from None
    if layer:
        model.set_node_layer(**layer)   # type: ignore[attr-defined]
    return model


def describe_networks() -> str:
    """One block per registered model: its name, formula line and parameters."""
    return REGISTRY.describe()


_OVERHEADS = ("send_overhead", "recv_overhead", "pair_send_overhead", "pair_recv_overhead")


def overhead_free(net: NetworkModel) -> bool:
    """Whether *net* charges no CPU overhead: its class keeps :class:`NetworkModel`'s four
    overhead methods (each ``0.0``) and the instance sets none of its own, so a protocol
    may take ``o = 0.0`` without asking."""
    own = getattr(net, "__dict__", {})
    return all(getattr(type(net), m) is getattr(NetworkModel, m) and m not in own
               for m in _OVERHEADS)
