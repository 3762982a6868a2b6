"""Machine presets: every TOML loads, gives a spec string, and carries the papers' numbers."""

from __future__ import annotations

import dataclasses
import re

import pytest

from bsim.machines import (
    MACHINE_DIR,
    Machine,
    MachineError,
    collective_spec,
    list_machines,
    load_machine,
    network_spec,
)
from bsim.machines.schema import NODE_NETWORK_KEYS
from netmodels import REGISTRY, build_network, parse_spec

MACHINES = ["bgp", "bluewaters", "dawn", "dgx_h100", "ds1", "es40", "es45", "frontier",
            "fugaku", "lobo", "petascale_torus", "power5", "primequest", "xe6", "xt5"]
MIB = 2**20


def _all_specs():
    for name in MACHINES:
        m = load_machine(name)
        yield name, None
        for variant in m.network_variants:
            yield name, variant


def test_list_machines_has_every_seed_machine():
    """All fifteen presets are bundled (the papers' ten, the tutorial's Dawn and Lobo, and
    three current systems: Frontier, a DGX H100 fat-tree cluster, Fugaku)."""
    assert list_machines() == MACHINES


@pytest.mark.parametrize("name", MACHINES)
def test_preset_loads(name):
    """Each preset loads into a frozen Machine with its own name."""
    m = load_machine(name)
    assert isinstance(m, Machine)
    assert m.name == name and m.cores_per_node >= 1
    assert m.description and m.source
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("name,variant", list(_all_specs()))
def test_spec_string_round_trips(name, variant):
    """network_spec gives ``model:k=v,...`` whose parsed keys are the table's, but for the
    layout key ``ranks_per_node``, which is not the model's (tests/test_petascale_flat.py)."""
    m = load_machine(name)
    table = m.network if variant is None else m.network_variants[variant]
    spec = network_spec(m, variant)
    model, kwargs = parse_spec(spec)
    assert model == table["model"]
    node = {k: m.node[k] for k in NODE_NETWORK_KEYS if k in m.node and k not in table}
    if model not in REGISTRY or "devices" not in REGISTRY.get(model).parameters:
        node = {}   # [node]'s devices and NICs go to topology models only
    assert list(kwargs) == [k for k in table if k not in ("model", "ranks_per_node")] + \
        list(node) + [k for k in kwargs if k == "cores" and "cores" not in table]
    for key, value in kwargs.items():
        assert value == table.get(key, node.get(key, m.cores_per_node))


@pytest.mark.parametrize("name,variant", list(_all_specs()))
def test_spec_builds_a_network(name, variant):
    """Every spec whose model is registered builds a network model."""
    spec = network_spec(name, variant)
    model = parse_spec(spec)[0]
    if model not in REGISTRY:
        pytest.skip(f"network model {model!r} not registered yet")
    assert build_network(spec).name == model


def _one_send(nbytes):
    import bsim
    comm = bsim.MPI.COMM_WORLD
    buf = bsim.buffer(nbytes, bsim.MPI.BYTE)
    if comm.Get_rank() == 0:
        comm.Send(buf, dest=1)
    else:
        comm.Recv(buf, source=0)


@pytest.mark.filterwarnings("ignore::bsim.machines.layout.FittedAtOtherCountWarning")
@pytest.mark.parametrize("name,variant", list(_all_specs()))
def test_every_preset_and_variant_runs(name, variant):
    """Each machine and variant ``bsim list machines`` shows runs a message (the
    power5:loggp_* variants, named like calibrate's LogGP ranges, stopped with a zip()
    error in the calibration-flag lookup); on a LogGP table the time is LogGP's
    ``2o + L + (s - 1) G`` (Alexandrov et al. 1995) read off the file."""
    import bsim
    machine = name if variant is None else f"{name}:{variant}"
    elapsed = bsim.simulate(_one_send, 2, machine=machine, args=(1000,), protocol="bsim").elapsed
    m = load_machine(name)
    table = m.network if variant is None else m.network_variants[variant]
    if table["model"] == "loggp":
        assert elapsed == pytest.approx(2 * table["o"] + table["L"] + 999 * table["G"],
                                        rel=1e-12)
    else:
        assert 0 < elapsed < 1


def test_unknown_machine_lists_valid_names():
    """An unknown name raises and names the valid presets."""
    with pytest.raises(MachineError, match="valid machines: bgp, bluewaters"):
        load_machine("cray1")


def test_unknown_variant_lists_valid_ones():
    """An unknown network variant raises and lists the machine's variants."""
    with pytest.raises(MachineError, match="p2048"):
        network_spec("bgp", "p9999")


def test_load_from_path(tmp_path):
    """A preset can be loaded from an explicit .toml path."""
    path = tmp_path / "toy.toml"
    path.write_text('name = "toy"\ndescription = "d"\nsource = "s"\ncores_per_node = 2\n'
                    '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n')
    m = load_machine(path)
    assert m.name == "toy" and m.collectives == {} and m.kernels == {}
    assert network_spec(m) == "hockney:latency=1e-06,bandwidth=1000000000.0"


@pytest.mark.parametrize("body,match", [
    ('name = "x"\n[network', "not valid TOML"),
    ('name = "x"\ndescription = "d"\nsource = "s"\n[network]\nmodel = "zero"\n',
     "missing key 'cores_per_node'"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = "4"\n'
     '[network]\nmodel = "zero"\n', "'cores_per_node' must be an integer, found a string '4'"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
     '[network]\nmodel = "warp"\n', "unknown model 'warp'"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
     '[network]\nlatency = 1.0\n', "missing string key 'model'"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
     '[network]\nmodel = "hockney"\nlatency = [1, 2]\n', "numbers, booleans or strings"),
    # a misspelt key is not ignored: it is named, with the closest valid one
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_nod = 4\n'
     '[network]\nmodel = "zero"\n', "unknown key 'cores_per_nod' .did you mean 'cores_per_node'"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
     '[network]\nmodel = "zero"\n[hardware]\npeak_flops_per_core = "fast"\n',
     r"\[hardware\] peak_flops_per_core must be a positive number, found a string 'fast'"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\nkernels = 3\n'
     '[network]\nmodel = "zero"\n', r"'kernels' must be a table \(\[kernels\]\), found an int"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
     '[network]\nmodel = "zero"\n[kernels]\nmilc = 1\n',
     r"\[kernels.milc\] must be a table, found an integer 1"),
    ('name = "x"\ndescription = "d"\nsource = "s"\ncores_per_node = 2\n'
     '[network]\nmodel = "torus"\ndims = "2x2"\ncores = 4\n',
     "cores = 4 ranks per node, but a node has cores_per_node = 2"),
])
def test_malformed_files_raise(tmp_path, body, match):
    """Broken TOML, missing/mistyped keys and bad network tables raise MachineError."""
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(MachineError, match=match):
        load_machine(path)


def test_missing_path_raises(tmp_path):
    """A .toml path that does not exist raises MachineError."""
    with pytest.raises(MachineError, match="does not exist"):
        load_machine(tmp_path / "none.toml")


@pytest.mark.parametrize("path", sorted(MACHINE_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_number_has_a_comment(path):
    """Each line assigning a number (or a table of numbers) names its source in a comment."""
    for line in path.read_text().splitlines():
        code = line.split("#", 1)[0]
        if re.match(r"\s*\w+\s*=\s*[-+\d\[{]", code):
            assert "#" in line, f"{path.name}: {line!r}"


def test_seed_004_values():
    """PRIMEQUEST l = 40 us, w = 100 MB/s; petascale 16x16x16 torus, 10 GB/s, 8 cores/node."""
    pq = load_machine("primequest")
    assert network_spec(pq) == "hockney:latency=4e-05,bandwidth=100000000.0"
    assert pq.kernels["flops"]["dgemm"] == {"slope_small": 0.173e-9, "slope_large": 0.165e-9,
                                           "break_flops": 10e6}
    ps = load_machine("petascale_torus")
    assert ps.cores_per_node == 8
    assert ps.network["dims"] == "16x16x16" and ps.network["link_bandwidth"] == 10e9
    assert ps.kernels["flops"]["peak_per_node"] == 512e9
    # 4096 nodes x 512 GFlop/s = 2.097 PFlop/s, printed as 2.1 (Sec. IV.A)
    peak = ps.hardware["nodes"] * ps.kernels["flops"]["peak_per_node"]
    assert peak == pytest.approx(ps.kernels["flops"]["peak_system"], rel=0.01)
    assert ps.kernels["flops"]["peak_per_core"] * ps.cores_per_node == 512e9
    assert ps.kernels["hpl"] == {"N": 1310720, "NB": 512, "P": 64, "Q": 64,
                                 "flops": 1.5e18, "predicted_pflops": 1.0}


def test_seed_000_values():
    """Spot checks of Tables III/IV and the Sec. V tables, MiB/s converted to bytes/s."""
    p5 = load_machine("power5")
    assert p5.kernels["milc"]["CG"] == {"b1": 0.425e-6, "b2": 0.483e-6, "s": 1200}
    assert p5.network_variants["loggp_inter_large"]["G"] == pytest.approx(0.0011e-6)
    assert load_machine("bgp").network_variants["p2048"]["bandwidth"] == 205 * MIB
    assert load_machine("xe6").network_variants["p8192"]["latency"] == pytest.approx(41.5e-6)
    assert load_machine("ds1").kernels["milc"]["FL"]["b2"] == pytest.approx(79e-6)
    assert load_machine("xt5").cores_per_node == 12


@pytest.mark.parametrize("name", ["power5", "bgp", "xt5", "xe6", "ds1"])
def test_milc_kernel_tables_complete(name):
    """All five kernels with b1 <= b2 (out of cache is slower) and a cache size s."""
    k = load_machine(name).kernels["milc"]
    assert k["float_bytes"] in (4, 8)
    for kernel in ("FF", "GF", "LL", "FL", "CG"):
        assert 0 < k[kernel]["b1"] <= k[kernel]["b2"]
        assert k[kernel]["s"] > 0


@pytest.mark.parametrize("name,cores,node_gib,expected_mib", [
    ("xt5", 12, 3.2, 266), ("xe6", 24, 7.0, 292), ("ds1", 32, 2.46, 77)])
def test_ideal_bandwidth_is_per_core_injection_share(name, cores, node_gib, expected_mib):
    """Default network bandwidth = node injection / cores (MILC paper rounds GiB as 1000 MiB)."""
    m = load_machine(name)
    assert m.cores_per_node == cores
    assert m.network["bandwidth"] == expected_mib * MIB
    assert expected_mib == pytest.approx(node_gib * 1000 / cores, rel=0.02)


def test_bgp_ideal_bandwidth():
    """375 MiB/s x 6 directions / 4 cores = 562.5 MiB/s per core (MILC paper, Sec. V-A)."""
    assert load_machine("bgp").network["bandwidth"] == 375 * 6 / 4 * MIB


def test_collective_spec_matches_netmodels():
    """[collectives] gives the MILC paper's allreduce c, d for allreduce, and the analytic
    model for the operations the paper did not fit (so HPL's allgather runs on xe6)."""
    from netmodels.collective_costs import CLOG_MACHINES, build_collective_model
    for name in ("power5", "xt5", "xe6"):
        spec = collective_spec(name)
        c, d = CLOG_MACHINES[name]
        assert spec == {"default": "analytic",
                        "allreduce": f"clog:allreduce.c={c!r},allreduce.d={d!r}"}
        assert build_collective_model(spec["allreduce"]).coefficients("allreduce") == (c, d)
    assert collective_spec("bgp") is None


def test_bool_values_format_lowercase():
    """Booleans in a network table appear as true/false in the spec."""
    assert "striping=true" in network_spec("bluewaters")


def test_repr_names_machine():
    """repr shows name, cores per node and network model."""
    assert repr(load_machine("es40")) == "<Machine es40 cores_per_node=4 network=hockney>"


def test_profile_may_name_any_registered_model_with_a_nested_spec(tmp_path):
    """A TOML [network] may use twolevel with a ';'-separated nested spec."""
    import netmodels
    from bsim.machines import load_machine, network_spec
    path = tmp_path / "node.toml"
    path.write_text('name = "node"\ndescription = "two-level test node"\nsource = "test"\n'
                    'cores_per_node = 4\n[network]\nmodel = "twolevel"\ncores = 4\n'
                    'intra = "hockney:latency=1e-7;bandwidth=1e10"\n'
                    'inter = "hockney:latency=2e-6;bandwidth=1e9"\n')
    model = netmodels.build_network(network_spec(load_machine(path)))
    model.prepare(8)
    assert model.cost(0, 1, 1000) == 1e-7 + 1000 / 1e10      # same node
    assert model.cost(0, 4, 1000) == 2e-6 + 1000 / 1e9       # next node


@pytest.mark.parametrize("name,variant", list(_all_specs()))
def test_on_node_figures_are_the_presets_own(name, variant):
    """A topology network holding several ranks a node prices their messages with
    ``intra_latency`` and ``intra_bandwidth``: a preset states both (with a source or an
    ASSUMED/DERIVED mark, test_every_number_has_a_comment) instead of inheriting netmodels'
    defaults unseen, and an on-node copy never outruns the node's own memory bandwidth."""
    m = load_machine(name)
    table = m.network if variant is None else m.network_variants[variant]
    spec = network_spec(m, variant)
    net = build_network(spec) if parse_spec(spec)[0] in REGISTRY else None
    if not hasattr(net, "intra_bandwidth") or getattr(net, "cores", 1) <= 1:
        pytest.skip("no ranks share a node on this network")
    assert "intra_latency" in table and "intra_bandwidth" in table
    node = m.hardware.get("memory_bandwidth_per_node")
    if node is not None:
        assert net.intra_bandwidth <= node
