"""``bsim list {skeletons,networks,protocols,filesystems,machines,mpi}``: what can be chosen by
name (``protocols`` ends with the named model levels of ``--level``);
``bsim show machine NAME``: one preset, whole, with its sources."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "command", "show"]

KINDS = ("skeletons", "networks", "protocols", "filesystems", "machines", "mpi")


def add_parser(subparsers: Any) -> None:
    """Register ``list`` on the ``bsim`` subparsers."""
    ls = subparsers.add_parser("list", help="list skeletons, networks, protocols, file "
                                            "systems (MPI-IO), machines, or mpi (which "
                                            "mpi4py names bsim simulates)")
    ls.add_argument("what", choices=KINDS)
    ls.set_defaults(handler=command)
    sh = subparsers.add_parser("show", help="show one machine preset whole, with its sources")
    sh.add_argument("what", choices=["machine"])
    sh.add_argument("name", metavar="NAME|FILE.toml[:VARIANT]")
    sh.set_defaults(handler=show)


def show(ns: argparse.Namespace) -> int:
    """Print the machine file (its comments give every figure's source) and what it yields."""
    from ..machines import collective_spec, filesystem_spec, load_machine, network_spec
    m = load_machine(ns.name)
    assert m.path is not None
    print(f"# {m.path}")
    print(m.path.read_text(encoding="utf-8").rstrip())
    print(f"\n# as bsim reads it ({m.spec}):")
    print(f"#   network      {network_spec(m)}")
    print(f"#   collectives  {collective_spec(m) or 'analytic (no [collectives])'}")
    print(f"#   filesystem   {filesystem_spec(m) or 'lustre defaults (no [filesystem])'}")
    peak = m.peak_flops_per_core
    print(f"#   peak         {f'{peak / 1e9:.4g} GFlop/s per core' if peak else 'not given'}")
    if m.node:
        print(f"#   node         {m.node_make_up()}")
    return 0


def command(ns: argparse.Namespace) -> int:
    """Print every registered item of the kind *ns.what* with its parameters."""
    if ns.what == "machines":
        from ..machines import list_machines, load_machine, network_spec
        for name in list_machines():
            m = load_machine(name)
            print(f"{m.name}: {m.description}")
            print(f"    {'year':<14} {m.raw.get('year', 'not given')}")
            print(f"    {'source':<14} {m.source}")
            if m.node:
                print(f"    {'node':<14} {m.node_make_up()}")
            print(f"    {'network':<14} {network_spec(m)}")
            variants = ", ".join(m.network_variants) or "none"
            print(f"    {'variants':<14} {variants}  (--machine {m.name}:VARIANT)")
            print(f"    {'kernel tables':<14} {', '.join(m.kernels) or 'none'}")
            peak, bw = m.peak_flops_per_core, m.memory_bandwidth_per_core
            hw = [f"peak {peak / 1e9:.4g} GFlop/s per core" if peak else "no peak",
                  f"memory {bw / 1e9:.4g} GB/s per core" if bw else "no memory bandwidth"]
            print(f"    {'hardware':<14} {m.cores_per_node} cores per node, {', '.join(hw)}")
    elif ns.what == "mpi":
        from ..mpi.coverage import NOT_SIMULATED, coverage, summary
        rows = coverage()
        done = sum(r.status == "simulated" for r in rows)
        print(f"{done} of {len(rows)} names of mpi4py.MPI simulated (docs/mpi_coverage.md)")
        for scope, sim, tot in summary(rows):
            why = NOT_SIMULATED.get(scope, "")
            print(f"    {scope:<14} {sim:>4} / {tot:<4} {why}")
    elif ns.what == "networks":
        from netmodels import describe_networks
        print(describe_networks())
    elif ns.what == "filesystems":
        from netmodels.filesystem import FILESYSTEMS
        for name, fs in sorted(FILESYSTEMS.items()):
            print(f"{name}: {(fs.__doc__ or '').strip().splitlines()[0]} (docs/io.md)")
            for k, v in fs.parameters.items():
                print(f"    {k:<20} {v} (default {fs.defaults[k]!r})")
    elif ns.what == "protocols":
        from ..engine.protocols import PROTOCOLS
        for name, cls in PROTOCOLS.items():
            print(f"{name}: {(cls.__doc__ or '').strip().splitlines()[0]}")
            for k, v in cls.parameters.items():
                print(f"    {k:<14} {v}")
        from ..engine.model_defaults import DEFAULT_CONTENTION, DEFAULT_PROTOCOL, LEVELS
        print("levels (--level NAME: the protocol and the contention at once; "
              "docs/validation.md, \"Model levels\"):")
        for name, (protocol, contention) in LEVELS.items():
            default = " (the default)" if (protocol, contention) == (DEFAULT_PROTOCOL,
                                                                      DEFAULT_CONTENTION) else ""
            print(f"    {name:<14} --protocol {protocol} --contention {contention}{default}")
    else:
        from skeletons import registry
        for name in registry.names():
            print(registry.get(name).describe())
    return 0
