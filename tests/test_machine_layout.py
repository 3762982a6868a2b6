"""A run's ranks on a machine's nodes (an outside review, /tmp/rv_mach findings 3, 5, 11).

Every expectation is derived by hand from the machine files:

* bgp.toml: ``cores_per_node = 4``, ``peak_flops_per_core = 3.4e9`` (13.6 GFlop/s a node);
* lobo.toml: ``cores_per_node = 16``, ``[hardware] nodes = 272``: 272 x 16 = 4,352 cores;
* power5.toml: ``cores_per_node = 16``, ``nodes = 120``: 1,920 cores;
* es45.toml: ``cores_per_node = 4``, ``nodes = 512``: 2,048 cores;
* dawn.toml: ``cores_per_node = 4``, ``nodes = 36864``: 147,456 cores;
* petascale_torus.toml: ``nodes = 4096``; its ``flat`` variant says ``ranks_per_node = 1``:
  4,096 places for ranks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bsim
from bsim.cli.main import main as cli
from bsim.machines import MACHINE_DIR, MachineError

TORUS = "torus:dims=4x4x1,link_bandwidth=589824000,latency=9.8e-6,hop_latency=0"
BGP_NODE = 4 * 3.4e9          # bgp: 4 cores of 3.4 GFlop/s


def compute() -> None:
    bsim.add_time(1.0)


def program(tmp_path: Path) -> Path:
    prog = tmp_path / "prog.py"
    prog.write_text("def main():\n    pass\n")
    return prog


# -- finding 3: --network beside --machine gets the machine's cores per node -------------
def test_network_beside_a_machine_placing_more_ranks_a_node_than_cores_is_refused():
    spec = "torus:dims=2x2x1,cores=16"
    with pytest.raises(MachineError, match=r"^machine 'bgp' has 4 cores per node; network "
                                           r"'torus:dims=2x2x1,cores=16' places 16 ranks on "
                                           r"each node$"):
        bsim.simulate(lambda: None, 16, machine="bgp", network=spec)


def test_cli_refuses_more_ranks_a_node_than_cores_in_one_line(tmp_path, capsys):
    rc = cli(["run", str(program(tmp_path)), "-n", "16", "--machine", "bgp", "--network",
              "torus:dims=2x2x1,cores=16", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err == ["bsim: error: machine 'bgp' has 4 cores per node; network "
                   "'torus:dims=2x2x1,cores=16' places 16 ranks on each node"]


def test_network_without_cores_beside_a_machine_takes_its_cores_per_node():
    """16 ranks, 4 a node (bgp's cores_per_node): 4 nodes of 13.6 GFlop/s = 54.4 GFlop/s
    (it took netmodels' cores = 1 before: 16 nodes, 217.6 GFlop/s)."""
    res = bsim.simulate(compute, 16, machine="bgp", network=TORUS, flops=1e9)
    assert ",cores=4," in res.network or res.network.endswith(",cores=4")
    assert res.peak_flops == pytest.approx(4 * BGP_NODE, rel=1e-12)


def test_network_with_fewer_cores_beside_a_machine_keeps_them():
    """cores = 2 of 4: 16 ranks on 8 nodes, 108.8 GFlop/s."""
    res = bsim.simulate(compute, 16, machine="bgp", network=TORUS + ",cores=2", flops=1e9)
    assert res.network.count("cores=") == 1 and "cores=2" in res.network
    assert res.peak_flops == pytest.approx(8 * BGP_NODE, rel=1e-12)


def test_network_model_without_nodes_beside_a_machine_is_left_alone():
    res = bsim.simulate(lambda: None, 4, machine="bgp",
                        network="hockney:latency=1e-06,bandwidth=1e9")
    assert "cores" not in res.network


# -- finding 5: no more ranks than the machine has places for ----------------------------
@pytest.mark.parametrize("machine, places, text", [
    ("lobo", 4352, "4,352 cores (272 nodes x 16)"),
    ("power5:p1024", 1920, "1,920 cores (120 nodes x 16)"),
    ("es45", 2048, "2,048 cores (512 nodes x 4)"),
    ("petascale_torus:flat", 4096, "4,096 places for ranks (4,096 nodes x 1)"),
])
def test_more_ranks_than_the_machine_holds_are_refused(machine, places, text):
    name = machine.split(":")[0]
    message = f"machine '{machine}' has {text}; {places + 1:,} ranks do not fit"
    with pytest.raises(MachineError, match=f"^{re.escape(message)}$"):
        bsim.simulate(lambda: None, places + 1, machine=machine)
    assert name in {p.stem for p in MACHINE_DIR.glob("*.toml")}


def test_as_many_ranks_as_the_machine_holds_run():
    assert bsim.simulate(lambda: None, 1920, machine="power5:p1024").ranks == 1920


def test_dawn_holds_147456_ranks():
    with pytest.raises(MachineError, match=r"147,456 cores \(36,864 nodes x 4\); 147,457 "):
        bsim.simulate(lambda: None, 147457, machine="dawn", check_memory=False)


def test_the_places_follow_the_networks_cores():
    """lobo with a torus of its 272 nodes, 8 ranks a node: 272 x 8 = 2,176 places."""
    spec = "torus:dims=17x16x1,cores=8"
    with pytest.raises(MachineError, match=r"^machine 'lobo' has 2,176 places for ranks "
                                           r"\(272 nodes x 8\); 2,177 ranks do not fit$"):
        bsim.simulate(lambda: None, 2177, machine="lobo", network=spec)


def test_cli_refuses_lobo_5000_in_one_line(tmp_path, capsys):
    rc = cli(["run", str(program(tmp_path)), "-n", "5000", "--machine", "lobo", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err == ["bsim: error: machine 'lobo' has 4,352 cores (272 nodes x 16); "
                   "5,000 ranks do not fit"]


def test_a_node_count_that_is_not_an_int_is_refused(tmp_path):
    text = (MACHINE_DIR / "lobo.toml").read_text().replace("nodes = 272", 'nodes = "272"')
    assert 'nodes = "272"' in text
    path = tmp_path / "lobo_str.toml"
    path.write_text(text)
    with pytest.raises(MachineError, match=r"\[hardware\] nodes = '272': expected an int"):
        bsim.simulate(lambda: None, 2, machine=str(path))


# -- finding 11: --network replaces only the network -------------------------------------
def test_network_help_says_the_collective_fits_stay(capsys):
    with pytest.raises(SystemExit):
        cli(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "overrides --machine" not in out
    assert "collective fits stay" in out


def test_network_beside_a_machine_keeps_its_collective_fits():
    """xt5's [collectives] allreduce fit stays under --network (as documented)."""
    res = bsim.simulate(lambda: None, 2, machine="xt5",
                        network="hockney:latency=8.4e-7,bandwidth=2.79e9")
    assert "clog" in str(res.collectives)


@pytest.mark.parametrize("cores", ["0", "abc", "4.0"])
def test_a_cores_value_that_is_no_count_is_named_as_such(cores):
    """``cores=0`` beside the 4-core BG/P said 'bgp has 4 cores per node; network places 0
    ranks on each node', as if 0 were too many (an outside review)."""
    with pytest.raises(MachineError, match=rf"cores = '?{cores}'?: expected a whole number "
                                           r"of ranks a node, 1 to 4"):
        bsim.simulate(lambda: None, 4, machine="bgp",
                      network=f"torus:dims=2x2x1,cores={cores}")


def test_a_sweep_checks_the_machine_s_nodes_before_the_first_point(tmp_path, capsys):
    """Lobo holds 4,352 ranks (272 nodes x 16): a halo2d sweep whose second point has
    5,000 is refused before the first runs (it ran the first, then failed: an outside
    review), nothing written."""
    out = tmp_path / "sw"
    status = cli(["sweep", "halo2d", "--machine", "lobo", "--mode", "grid", "--param",
                  "px=2,100", "--param", "py=2,50", "--param", "nx=400", "--param", "ny=400",
                  "--param", "iterations=1", "-j", "1", "-o", str(out)])
    err = capsys.readouterr()
    assert status == 2
    assert "machine 'lobo' has 4,352 cores (272 nodes x 16); 5,000 ranks do not fit" \
        in err.err
    assert "[1/" not in err.out + err.err and not list(tmp_path.iterdir())
