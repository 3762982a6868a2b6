"""``bsim list {skeletons,networks,protocols,machines}``: what can be chosen by name."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "command"]

KINDS = ("skeletons", "networks", "protocols", "machines")


def add_parser(subparsers: Any) -> None:
    """Register ``list`` on the ``bsim`` subparsers."""
    ls = subparsers.add_parser("list", help="list skeletons, networks, protocols or machines")
    ls.add_argument("what", choices=KINDS)
    ls.set_defaults(handler=command)


def command(ns: argparse.Namespace) -> int:
    """Print every registered item of the kind *ns.what* with its parameters."""
    if ns.what == "machines":
        from ..machines import list_machines, load_machine, network_spec
        for name in list_machines():
            m = load_machine(name)
            print(f"{m.name}: {m.description}")
            print(f"    {'source':<14} {m.source}")
            print(f"    {'network':<14} {network_spec(m)}")
    elif ns.what == "networks":
        from netmodels import describe_networks
        print(describe_networks())
    elif ns.what == "protocols":
        from ..engine.protocols import PROTOCOLS
        for name, cls in PROTOCOLS.items():
            print(f"{name}: {(cls.__doc__ or '').strip().splitlines()[0]}")
            for k, v in cls.parameters.items():
                print(f"    {k:<14} {v}")
    else:
        from skeletons import registry
        for name in registry.names():
            print(registry.get(name).describe())
    return 0
