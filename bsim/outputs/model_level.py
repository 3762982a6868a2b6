"""What a prediction means: its model level and where its compute times came from.

The model level names the point-to-point rules and the sharing of links a run used, from
its protocol and contention specs (``docs/validation.md``, "Model levels"):

* ``paper rules (bsim)``: the BSIM paper's receive rule, ``max(tp, ts) + cost``;
* ``LogGP`` / ``LogGOPS``: the ``loggp`` / ``loggops`` protocols (``docs/protocols.md``);
* ``SMPI's rules``: ``loggp`` with ``data=match`` and ``injection=parallel``, SimGrid
  SMPI's point-to-point rule;

each followed by ``no contention``, ``fluid contention`` or ``CM02 sharing (SMPI's)`` for
``fluid:share=latency,start=after_latency``.

The compute source is the run's kernel model (``bsim/machines/kernels.py``: a machine's
kernel table, the generic roofline, a value given) when the program takes its compute
times from the machine, else ``add_time as written``: the program's own seconds, which
``--machine`` does not change (it changes the network only).
"""

from __future__ import annotations

__all__ = ["model_level", "compute_source", "nearest_per_p_variant"]


def _options(spec: str) -> dict[str, str]:
    _, _, rest = spec.partition(":")
    return dict(kv.split("=", 1) for kv in rest.split(",") if "=" in kv)


def model_level(protocol: str, contention: str) -> str:
    """``"<rules>, <sharing>"`` of a run with these protocol and contention specs."""
    name = protocol.partition(":")[0]
    opts = _options(protocol)
    if name == "bsim":
        rules = "paper rules (bsim)"
    elif name == "loggops":
        rules = "LogGOPS"
    elif name == "loggp" and opts.get("data") == "match" \
            and opts.get("injection") == "parallel":
        rules = "SMPI's rules"
    elif name == "loggp":
        rules = "LogGP"
    else:
        rules = name or "?"
    mode = contention.partition(":")[0]
    copts = _options(contention)
    if mode in ("", "none"):
        sharing = "no contention"
    elif copts.get("share") == "latency" and copts.get("start") == "after_latency":
        sharing = "CM02 sharing (SMPI's)"
    else:
        sharing = f"{mode} contention"
    return f"{rules}, {sharing}"


def nearest_per_p_variant(name: str, variants: list[str], variant: str | None,
                          ranks: int) -> str:
    """A note when a machine with per-P variants (``p64``, ``p4096``: a paper's model at that
    process count, e.g. the MILC paper's) is run without one: its ``[network]`` is then the
    preset's ideal network, not the paper's model.  Names the variant nearest *ranks* (in
    ratio); ``""`` when there is nothing to say."""
    counts = {int(v[1:]): v for v in variants if v[:1] == "p" and v[1:].isdigit()}
    if variant is not None or not counts:
        return ""
    near = min(counts, key=lambda p: (max(p, ranks) / min(p, ranks), p))
    listed = ", ".join(counts[p] for p in sorted(counts))
    return (f"{name} has per-P variants ({listed}), each a paper's model at that process "
            f"count; this run takes its [network] (the preset's ideal network); the nearest "
            f"to {ranks:,} rank{'s' if ranks != 1 else ''} is {name}:{counts[near]}")


def compute_source(kernel_model: str, compute: str) -> str:
    """Where the run's compute times came from, in one line."""
    if compute:
        return f"host-measured ({compute})"
    if kernel_model:
        return kernel_model
    return "add_time as written (seconds; --machine sets the network only)"
