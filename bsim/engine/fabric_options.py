"""The options of the fluid contention model, and parsing its spec.

``--contention`` / ``simulate(contention=...)`` takes ``none`` or
``fluid[:share=S,start=T]`` (``docs/protocols.md``, "Contention"):

* ``share``: how a link's capacity is split among the flows crossing it.
  ``equal`` (default): max-min fairness (Bertsekas & Gallager, *Data
  Networks*, Sec. 6.5.2), the behaviour of credit-based HPC fabrics that
  arbitrate per packet.  ``latency``: weighted max-min with weight ``1 /
  route latency``: TCP's round-trip-time unfairness as SimGrid's CM02 model
  charges it (Casanova & Marchal 2002; a flow's sharing penalty is its
  latency in SimGrid's ``network_cm02.cpp``).
* ``start``: when a flow's bytes begin to share links.  ``send`` (default):
  at once; the route's latency is added after the bytes (the BSIM paper's
  ``l + s/w``).  ``after_latency``: once the route's latency has passed, as
  CM02 holds a flow out of the sharing until its latency is paid.
"""

from __future__ import annotations

__all__ = ["CONTENTION_MODES", "SHARES", "STARTS", "parse_contention"]

CONTENTION_MODES = ("none", "fluid")
SHARES = ("equal", "latency")
STARTS = ("send", "after_latency")


def parse_contention(contention: str | None) -> tuple[str, dict[str, str]]:
    """``(mode, options)`` of a contention spec: ``none``, ``fluid[:share=S,start=T]``.

    Raises ``ValueError`` naming the valid choices.
    """
    if contention is None or contention.strip().lower() == "none":
        return "none", {}
    mode, _, text = contention.partition(":")
    mode = mode.strip().lower()   # case-insensitive, as the other spec names
    valid = {"share": SHARES, "start": STARTS}
    usage = ",".join(f"{k}={'|'.join(v)}" for k, v in valid.items())
    if mode != "fluid":
        raise ValueError(f"unknown contention model {contention!r}; valid: "
                         f"{', '.join(CONTENTION_MODES)} (fluid:{usage})")
    opts: dict[str, str] = {}
    for item in filter(None, text.split(",")):
        key, eq, value = item.partition("=")
        if not eq or value not in valid.get(key, ()):
            raise ValueError(f"contention {contention!r}: unknown option {item!r}; "
                             f"valid: {usage}")
        if key in opts:   # as network specs: a second value would silently win
            raise ValueError(f"contention {contention!r}: {key} given twice")
        opts[key] = value
    return mode, opts


