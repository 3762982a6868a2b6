"""Build network models from spec strings such as ``"hockney:latency=1e-6,bandwidth=1e9"``.

Grammar: ``NAME[:KEY=VALUE[,KEY=VALUE]...]``.  Values are parsed as int, then
float, then kept as strings (``torus:dims=16x16x16``).  Unknown names and
unknown keys raise :class:`~netmodels.base.NetworkSpecError` listing what is
valid.
"""

from __future__ import annotations

from typing import Any

from .base import REGISTRY, NetworkModel, NetworkSpecError

__all__ = ["parse_value", "parse_spec", "build_network", "describe_networks"]


def parse_value(text: str) -> Any:
    """Parse one spec value: int, float, bool, else the stripped string."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``NAME:k=v,...`` into the name and a dict of parsed values."""
    name, _, rest = spec.strip().partition(":")
    kwargs: dict[str, Any] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise NetworkSpecError(f"network spec {spec!r}: expected KEY=VALUE, got {item!r}")
            kwargs[key.strip()] = parse_value(value)
    return name.strip().lower(), kwargs


def build_network(spec: str | NetworkModel) -> NetworkModel:
    """Return *spec* itself if it is a model, else build the model it names."""
    if isinstance(spec, NetworkModel):
        return spec
    if not isinstance(spec, str):
        raise NetworkSpecError(f"network must be a spec string or a NetworkModel, got {spec!r}")
    name, kwargs = parse_spec(spec)
    cls = REGISTRY.get(name)
    if cls is None:
        valid = ", ".join(sorted(REGISTRY))
        raise NetworkSpecError(f"unknown network model {name!r}; valid models: {valid}")
    unknown = sorted(set(kwargs) - set(cls.parameters))
    if unknown:
        valid = ", ".join(f"{k} ({v})" for k, v in cls.parameters.items()) or "none"
        raise NetworkSpecError(
            f"network model {name!r}: unknown parameter(s) {', '.join(unknown)}; valid: {valid}")
    try:
        return cls(**kwargs)
    except TypeError as exc:  # wrong value types surface here
        raise NetworkSpecError(f"network model {name!r}: {exc}") from None


def describe_networks() -> str:
    """One block per registered model: its name, formula line and parameters."""
    lines = []
    for name in sorted(REGISTRY):
        cls = REGISTRY[name]
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        lines.append(f"{name}: {doc}")
        for key, text in cls.parameters.items():
            lines.append(f"    {key:<14} {text}")
    return "\n".join(lines)
