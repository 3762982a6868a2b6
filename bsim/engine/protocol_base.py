"""The protocol interface every point-to-point rule implements (:class:`Protocol`).

A protocol decides when a message is visible to its receiver and what each side is charged
(``docs/protocols.md``); the rules are in :mod:`bsim.engine.protocols` (``bsim``, the BSIM
paper's; ``loggp``, LogGP's) and :mod:`bsim.engine.loggops` (LogGOPS, Hoefler et al. 2010).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from .envelope import Enveloped
from .matching import Message
from .protocol_state import DEFERRED, ProtocolState

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from .core import Engine
    from .fabric import ContentionLayer
    from .rank import VirtualRank
    from .surface import Request

__all__ = ["Protocol", "DEFERRED"]


class Protocol(ProtocolState, ABC):
    """Base class: subclasses implement :meth:`send` and :meth:`matched`.

    Its state (``ProtocolState``): ``engine``, ``net`` (the network model, wrapped to add
    the envelope's bytes), ``fabric`` (the contention layer or None), ``credits`` (see
    :meth:`probed`), ``envelope`` and ``poll_time``.
    """

    name: ClassVar[str] = ""
    overlaps: ClassVar[bool] = False   # nonblocking calls run while the rank computes
    parameters: ClassVar[dict[str, str]] = {}

    def __init__(self, poll_time: float = 1e-6, envelope: int = 0) -> None:
        if isinstance(poll_time, bool) or not isinstance(poll_time, (int, float)) \
                or not 0 < poll_time < float("inf"):
            raise ValueError(f"{self.name} protocol: poll_time must be seconds > 0 (a Test "
                             f"or Iprobe that finds nothing must let simulated time pass, or "
                             f"a polling loop never ends), got {poll_time!r}")
        self.poll_time = float(poll_time)
        if isinstance(envelope, bool) or not isinstance(envelope, int) or envelope < 0:
            raise ValueError(f"{self.name} protocol: envelope must be an int >= 0 (bytes), "
                             f"got {envelope!r}")
        self.envelope = envelope
        self.credits: dict[Message, float] = {}   # probed messages (see probed)
        # set by bind(): a protocol is used only once bound to its engine
        self.engine: Engine
        self.net: NetworkModel
        self.fabric: ContentionLayer | None = None
        self.hockney = False
        self.send_network, self.send_seconds = False, 0.0   # the bsim protocol's send charge
        self.exact_bsim = False   # BsimProtocol's own steps as C calls (ProtocolState)

    def bind(self, engine: Engine) -> None:
        """Attach to an engine (its network model and ranks)."""
        self.engine = engine
        self.use_network(Enveloped(engine.network, self.envelope) if self.envelope
                         else engine.network)
        self.fabric = engine.fabric

    @abstractmethod
    def lookahead(self, net: NetworkModel) -> float:
        """The least delay between an event and any effect it has on another rank."""

    @abstractmethod
    def send(self, vr: VirtualRank, dst: VirtualRank, msg: Message, req: Request,
             synchronous: bool) -> None:
        """Start sending *msg* from *vr*; resolve or arrange to resolve *req*."""

    @abstractmethod
    def matched(self, req: Request, msg: Message) -> None:
        """*msg* matched the posted receive *req*; arrange to resolve *req*."""

    def message_time(self, net: NetworkModel, src: int, dst: int, nbytes: int) -> float:
        """A lone message's time from the send to the receive's completion (the receive
        posted in time, nothing else in the network), as :meth:`send` and
        :meth:`matched` charge it on *net*: the price of one message of a collective
        formula (``bsim.engine.collective_costs``).  Here ``cost(src, dst, s + envelope)``
        (the BSIM paper's rule: the whole cost at the receiver)."""
        return float(net.cost(src, dst, nbytes + self.envelope))

    def transfer(self, vr: VirtualRank, req: Request, start: float, call: str) -> float:
        """Move a receive's bytes from *start*, now that the receiver handles it; return the
        end (protocols that resolve receives with ``cost = DEFERRED``)."""
        raise NotImplementedError(f"the {self.name} protocol does not defer transfers")

    def probed(self, msg: Message, t_probe: float) -> None:
        """A blocking probe posted at *t_probe* waited for *msg* and returns now, at
        ``msg.visible``.  Protocols whose receive charges the message's cost from when
        it is posted credit that wait to the receive (:class:`BsimProtocol`)."""

    def _credit(self, msg: Message, credit: float) -> None:
        """Keep the largest of the credits of the probes that waited for *msg*."""
        if credit > self.credits.get(msg, 0.0):
            self.credits[msg] = credit

    def poll(self, vr: VirtualRank, call: str) -> None:
        """A test or iprobe found nothing: charge ``poll_time`` of wait and yield.

        Without this a ``while not req.Test(): pass`` loop would never let
        simulated time advance.
        """
        t = vr.clock
        vr.wait += self.poll_time
        vr.clock = t + self.poll_time
        if vr.engine.tracer is not None:
            vr.engine.tracer.span(vr.rank, "wait", call, t, vr.clock)
        vr.polled = True   # for the engine's livelock check (Engine.run_until)
        vr.sleep_until(vr.clock, call)

    def params(self) -> dict[str, Any]:
        """Parameters by name."""
        return {k: getattr(self, k) for k in self.parameters}

    #: options written into the spec only when they differ from these defaults
    #: (the physics knobs added later: older records stay the same strings)
    quiet_defaults: ClassVar[dict[str, Any]] = {"envelope": 0, "injection": "serial",
                                                "data": "inject"}

    def spec(self) -> str:
        """Spec string that rebuilds this protocol."""
        args = ",".join(f"{k}={v}" for k, v in self.params().items()
                        if self.quiet_defaults.get(k, self) != v)
        return f"{self.name}:{args}" if args else self.name
