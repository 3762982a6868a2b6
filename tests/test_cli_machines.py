"""``bsim run --machine`` / ``--contention`` and ``bsim list machines``."""

from __future__ import annotations

import json

import pytest

from bsim.cli.main import main
from bsim.machines import list_machines, network_spec
from netmodels import build_network

HALO = ["run", "halo2d", "--param", "px=4", "--param", "py=2", "--param", "iterations=2",
        "--quiet"]


def _network_of(tmp_path, *args):
    out = tmp_path / "r.json"
    assert main(HALO + ["--json", str(out), *args]) == 0
    return json.loads(out.read_text())["network"]


def test_machine_sets_the_network_from_its_preset(tmp_path):
    """--machine bgp runs on the preset's [network] spec."""
    assert _network_of(tmp_path, "--machine", "bgp") == build_network(network_spec("bgp")).spec()


def test_network_overrides_machine(tmp_path):
    """--network given with --machine wins."""
    net = "hockney:latency=1e-06,bandwidth=1000000000.0"
    assert _network_of(tmp_path, "--machine", "bgp", "--network", net) == net


def test_machine_from_a_toml_file(tmp_path):
    """--machine FILE.toml loads a user preset."""
    path = tmp_path / "toy.toml"
    path.write_text('name = "toy"\ndescription = "d"\nsource = "s"\ncores_per_node = 2\n'
                    '[network]\nmodel = "piecewise"\nbreaks = "32"\nt0 = "1e-6/2e-6"\n'
                    'tb = "0/1e-9"\n[kernels.halo2d]\nt_point = 1e-8\n')
    assert _network_of(tmp_path, "--machine", str(path)).startswith("piecewise:breaks=32,")


def test_unknown_machine_is_a_one_line_error(capsys):
    """An unknown preset gives exit code 2 and lists the valid names."""
    assert main(HALO + ["--machine", "cray1"]) == 2
    assert "unknown machine 'cray1'; valid machines: bgp" in capsys.readouterr().err


def test_list_machines_shows_name_description_source_and_network(capsys):
    """bsim list machines: every preset with its description, source and spec."""
    assert main(["list", "machines"]) == 0
    out = capsys.readouterr().out
    for name in list_machines():
        assert f"\n{name}: " in "\n" + out
        assert network_spec(name) in out
    assert "source         the MILC paper, Sec. IV-A" in out


def test_contention_flag_runs_on_topologies_and_flat_models(tmp_path, capsys):
    """--contention fluid works on a torus preset and on a flat one (NICs shared)."""
    out = tmp_path / "r.json"
    assert main(HALO + ["--machine", "petascale_torus", "--contention", "fluid",
                        "--param", "t_point=5e-9", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["ranks"] == 8
    assert main(HALO + ["--machine", "bgp", "--contention", "fluid"]) == 0


def test_machine_supplies_its_collective_model(tmp_path):
    """--machine FILE uses its [collectives] table (a CSV next to the file, relative path)."""
    import json

    from bsim.cli.main import main
    (tmp_path / "coll.csv").write_text("op,nprocs,nbytes,seconds\nbarrier,2,0,1e-3\n"
                                       "barrier,4,0,3e-3\n")
    (tmp_path / "m.toml").write_text(
        'name = "m"\ndescription = "test"\nsource = "test"\ncores_per_node = 1\n'
        '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n'
        '[collectives]\nmodel = "table"\npath = "coll.csv"\n')
    prog = tmp_path / "bar.py"
    prog.write_text("from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n")
    out = tmp_path / "r.json"
    assert main(["run", str(prog), "-n", "3", "--machine", str(tmp_path / "m.toml"),
                 "--json", str(out), "--quiet"]) == 0
    # P = 3 interpolates halfway between the table's 1 ms (P=2) and 3 ms (P=4)
    assert json.loads(out.read_text())["per_rank"]["finish"] == [2e-3] * 3


def test_machine_feeds_the_skeletons_kernel_times(tmp_path):
    """bsim run milc_cg --machine xt5 takes XT5's [kernels.milc], not the BG/P default.

    Same network and collectives for both runs; only the kernel table differs, so the
    calc time per rank must equal niters * T(CG, V) of each machine (MILC paper, Eq. 1).
    """
    import json

    from bsim.cli.main import main
    from bsim.machines import load_machine
    out = {}
    for machine in ("bgp", "xt5"):
        path = tmp_path / f"{machine}.json"
        assert main(["run", "milc_cg", "--machine", machine, "--network", "zero",
                     "--collectives", "clog:c=0,d=0", "--param", "nx=8", "--param", "ny=8",
                     "--param", "nz=8", "--param", "nt=8", "--param", "niters=3",
                     "--param", "invocations=1", "-n", "16", "--json", str(path),
                     "--quiet"]) == 0
        out[machine] = json.loads(path.read_text())["per_rank"]["calc"][0]
    V = 8 ** 4 // 16                  # sites per rank
    for machine, calc in out.items():
        cg = load_machine(machine).kernels["milc"]["CG"]
        b1, b2, s = cg["b1"], cg["b2"], cg["s"]     # Eq. 1: b1*min(s, V) + b2*max(0, V - s)
        assert calc == pytest.approx(3 * (b1 * min(s, V) + b2 * max(0, V - s)), rel=1e-12)
    assert out["bgp"] != out["xt5"]


@pytest.mark.parametrize("skeleton,machine,params", [
    ("hpl", "primequest", ["n=2048", "nb=128", "p=2", "q=2"]),
    ("phase", "petascale_torus", []),
])
def test_a_network_variant_or_a_copied_machine_file_keeps_the_machines_kernels(
        tmp_path, skeleton, machine, params):
    """HPL and PHASE read [kernels.hpl_blas] themselves: with a network variant of the
    machine (which changes only the network) or a copy of its file under another name, the
    compute time per rank is the machine's own, bit for bit (both used to fail: the
    variant was read as kernel options, a file by its name as a preset)."""
    from bsim.machines import MACHINE_DIR, load_machine
    variant = sorted(load_machine(machine).raw["network_variants"])[0]
    copy = tmp_path / "copy.toml"
    copy.write_text((MACHINE_DIR / f"{machine}.toml").read_text().replace(
        f'name = "{machine}"', 'name = "copied"'))
    calc = {}
    for spec in (machine, f"{machine}:{variant}", str(copy)):
        out = tmp_path / "r.json"
        args = [a for p in params for a in ("--param", p)]
        assert main(["run", skeleton, "--machine", spec, "-n", "4", *args, "--json", str(out),
                     "--quiet", "--network", "zero"]) == 0
        calc[spec] = json.loads(out.read_text())["per_rank"]["calc"]
    assert calc[machine] == calc[f"{machine}:{variant}"] == calc[str(copy)]
    assert min(calc[machine]) > 0
