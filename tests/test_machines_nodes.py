"""Presets of current systems and the [node] table: figures, runs, records, the peak check.

Expected figures come from the public sources the files cite (TOP500 entries, vendor
datasheets), derived here by hand, not from the files' own arithmetic.
"""

from __future__ import annotations

import json
import math

import pytest

import bsim
from bsim.cli.main import main
from bsim.errors import AbovePeakError
from bsim.machines import MachineError, load_machine, network_spec
from bsim.machines.layout import network_on_machine
from bsim.outputs.result import Result
from netmodels import REGISTRY, build_network

needs_dragonfly = pytest.mark.skipif("dragonfly" not in REGISTRY,
                                     reason="the dragonfly network model is not installed")


def test_fugaku_figures_match_the_top500_entry():
    """TOP500 (Nov 2020): 7,630,848 cores, Rpeak 537.212 PF at 2.2 GHz: 70.4 GF a core;
    158,976 nodes of 48 cores; HBM2 1,024 GB/s a node; the torus holds every node."""
    m = load_machine("fugaku")
    assert m.peak_flops_per_core == pytest.approx(537.212e15 / 7_630_848, rel=1e-3)
    assert m.hardware["nodes"] * m.cores_per_node == 7_630_848
    assert m.memory_bandwidth_per_core * m.cores_per_node == pytest.approx(1024e9)
    assert math.prod(int(k) for k in m.network["dims"].split("x")) == 158_976
    assert m.devices_per_node == 4 and m.node["kind"] == "cpu"


def test_dgx_h100_tree_holds_its_nodes_and_binds_gpu_i_to_nic_i():
    """A 32-ary 3-tree has 32^3 ports = 4,096 nodes of 8 NICs; H100: 67 TF FP64 tensor."""
    m = load_machine("dgx_h100")
    net = build_network(network_spec(m))
    assert net.num_nodes() == 32**3 and net.num_hosts() == m.hardware["nodes"] == 4096
    assert m.peak_flops_per_core * m.cores_per_node == pytest.approx(8 * 67e12)
    net.prepare(16)
    assert net.rank_layout() == {"node": [r // 8 for r in range(16)],
                                 "device": [r % 8 for r in range(16)],
                                 "nic": [r % 8 for r in range(16)]}


@needs_dragonfly
def test_frontier_dragonfly_has_a_port_for_every_nic():
    """74 groups x 32 switches x 16 ports = 37,888 NIC ports >= 9,408 nodes x 4 NICs;
    4 MI250X of 95.7 TF FP64 matrix a node; GCD pairs share a NIC."""
    m = load_machine("frontier")
    net = build_network(network_spec(m))
    assert net.num_nodes() == 74 * 32 * 16 and net.num_hosts() * 4 == net.num_nodes()
    assert m.hardware["nodes"] * 4 <= net.num_nodes()
    assert m.peak_flops_per_core * m.cores_per_node == pytest.approx(4 * 95.7e12, rel=1e-3)
    net.prepare(16)
    assert net.rank_layout()["nic"][:8] == [0, 0, 1, 1, 2, 2, 3, 3]


@pytest.mark.parametrize("machine", ["dgx_h100", "fugaku",
                                     pytest.param("frontier", marks=needs_dragonfly)])
def test_a_run_states_device_nic_and_compute_source(machine, tmp_path):
    """halo2d on 16 ranks: the summary names the node, the placement and the kernel source;
    the JSON holds each rank's node, device and NIC."""
    out = tmp_path / "r.json"
    assert main(["run", "halo2d", "--machine", machine, "--protocol", "bsim", "--quiet",
                 "--json", str(out), "--param", "px=4", "--param", "py=4",
                 "--param", "nx=256", "--param", "ny=256"]) == 0
    data = json.loads(out.read_text())
    m = load_machine(machine)
    assert data["node"] == m.node_make_up() and m.node["device"] in data["node"]
    cpn, d, k = m.cores_per_node, m.devices_per_node, m.node.get("nics", 1)
    assert data["layout"]["device"] == [(r % cpn) * d // cpn for r in range(16)]
    assert data["layout"]["nic"] == [((r % cpn) * d // cpn) * k // d for r in range(16)]
    assert "generic roofline" in data["kernel_model"] and "per device" in data["kernel_model"]
    summary = Result.from_dict(data).summary()
    assert "  node      " in summary and "  placed    16 ranks on" in summary


def test_a_gpu_rank_never_computes_above_its_device_peak():
    """halo2d's 4 flop a point: at t_point < 4 / 67 TF = 5.97e-14 s an H100 rank would run
    above the device's peak and is refused; just above that it runs (below peak)."""
    from skeletons.halo2d import main as halo

    def run(t_point):
        return bsim.simulate(halo, 16, machine="dgx_h100", protocol="bsim",
                             kwargs=dict(px=4, py=4, nx=256, ny=256, iterations=2,
                                         t_point=t_point),
                             flops=4 * 256 * 256 * 2)
    with pytest.raises(AbovePeakError):
        run(5.9e-14)
    res = run(6.0e-14)
    assert res.peak_flops == pytest.approx(2 * 8 * 67e12)   # the two nodes the ranks use


def test_generic_roofline_is_per_device():
    """halo2d's 24 B a point at a GCD's 1.6 TB/s: 1.5e-11 s (its 4 flop at 47.9 TF: 8e-14)."""
    from bsim.machines.kernels import generic_time
    from skeletons import registry
    kernel = registry.get("halo2d").machine_kernel
    m = load_machine("fugaku")
    t, account = generic_time(kernel, m)
    assert t == pytest.approx(24 / (1024e9 / 48))        # a core's share of HBM2
    assert "memory-bound" in account and "A64FX CMG" in account


def test_a_network_beside_the_machine_gets_its_devices_and_nics():
    """--machine fugaku --network torus:...: the node's 4 CMGs come with it, as cores do."""
    spec = network_on_machine(load_machine("fugaku"), "torus:dims=4x4x4", 96)
    assert "cores=48" in spec and "devices=4" in spec and "nics=1" in spec
    assert network_on_machine(load_machine("fugaku"), "hockney:latency=1e-6", 96) == \
        "hockney:latency=1e-6"


@pytest.mark.parametrize("node, match", [
    ("devices = 9", "devices = 9, more than cores_per_node = 8"),
    ("kind = \"fpga\"", "kind must be gpu or cpu"),
    ("nic_polcy = \"device\"", "unknown key 'nic_polcy' \\(did you mean 'nic_policy'\\?\\)"),
    ("nics = 0", "nics must be positive"),
    ("peak_flops_per_device = \"fast\"", "peak_flops_per_device must be a number"),
])
def test_bad_node_tables_are_refused_on_load(tmp_path, node, match):
    """Each [node] mistake is one line naming the key."""
    path = tmp_path / "m.toml"
    path.write_text('name = "m"\ndescription = "d"\nsource = "s"\ncores_per_node = 8\n'
                    f'[node]\n{node}\n[network]\nmodel = "hockney"\n')
    with pytest.raises(MachineError, match=match):
        load_machine(path)


def test_list_machines_shows_year_node_and_source(capsys):
    """bsim list machines: each current system's year, node make-up and source."""
    assert main(["list", "machines"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("fugaku: "):]
    assert "    year           2020" in block
    assert "    node           4 x A64FX CMG" in block
    assert "    source         TOP500" in block
