"""Every skeleton under every protocol, collective source and contention setting.

A robustness net over the feature matrix: each combination must run to completion and keep
the accounting invariant ``finish == calc + wait + comm`` on every rank, and a second run
must give bit-identical per-rank times (determinism).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bsim
from bsim import MPI
from skeletons import registry

CASES = {
    "halo2d": dict(px=4, py=2, nx=64, ny=32, iterations=3, check_every=2),
    "sweep3d": dict(px=2, py=4, nx=16, ny=16, nz=8, mk=4, mm=2, mmi=1),
    "milc_cg": dict(nx=4, ny=4, nz=4, nt=8, px=2, py=2, pz=1, pt=2, niters=3, invocations=1),
    "milc_rmd": dict(nx=4, ny=4, nz=4, nt=8, px=2, py=2, pz=1, pt=2, niters=4, trajecs=1,
                     steps=1),
    "hpl": dict(n=256, nb=16, p=2, q=4, verbose=False),
    "phase": dict(pb=2, pf=4, ne=16, nf=256, nblk=2, verbose=False),
}
SETTINGS = [
    (net, proto, coll, None)
    for net, proto, coll in itertools.product(
        ["hockney:latency=1e-6,bandwidth=1e9", "loggp:L=2e-6,o=5e-7,g=1e-6,G=1e-9"],
        ["bsim", "loggp:eager_limit=512", "bsim:send_cost=network"],
        ["analytic", "algorithmic", "clog:c=1e-6,d=1e-6"])
] + [("torus:dims=2x2x2,cores=1", proto, coll, "fluid")
     for proto in ("bsim", "loggp:eager_limit=512") for coll in ("analytic", "algorithmic")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_setting_runs_and_keeps_the_accounting_invariant(name):
    """All settings complete on 8 ranks; finish = calc + wait + comm; reruns are identical."""
    skel = registry.get(name)
    params = skel.resolve({k: str(v) for k, v in CASES[name].items()})
    ranks = skel.ranks(params)
    assert ranks == 8
    for net, proto, coll, contention in SETTINGS:
        run = [bsim.simulate(skel.main, ranks, network=net, protocol=proto, collectives=coll,
                             kwargs=params, contention=contention) for _ in range(2)]
        res = run[0]
        assert np.allclose(res.finish, res.calc + res.wait + res.comm, rtol=1e-9, atol=1e-15), \
            (net, proto, coll, contention)
        assert res.finish.tolist() == run[1].finish.tolist(), (net, proto, coll, contention)
        assert res.elapsed > 0


def _fan_out():
    """Rank 0 sends 100 kB to every other rank, four times."""
    comm = MPI.COMM_WORLD
    for _ in range(4):
        if comm.rank == 0:
            for d in range(1, comm.size):
                comm.Send(bsim.Buffer(100_000), dest=d)
        else:
            comm.Recv(bsim.Buffer(100_000), source=0)


@pytest.mark.parametrize("network,protocol,contention,inert", [
    ("loggp:g=1e-4", "bsim", None, "g=0.0001"),       # g spaces injections under loggp only
    ("loggp:g=1e-4", "loggp", None, None),
    ("twolevel:cores=4,nics=4", "bsim", None, "nics=4"),   # NICs are fluid flows only
    ("twolevel:cores=4,nics=4", "bsim", "fluid", None),
    ("twolevel:cores=4", "bsim", None, None),          # the default nics: nothing to say
])
def test_a_network_setting_that_cannot_act_is_warned_of(network, protocol, contention, inert):
    """A setting the run's protocol or contention cannot use gives the prediction without
    it, so the run says so (Result.inert, the JSON, a summary warning) instead of being
    silent.  The prediction is indeed the same as without the setting."""
    kw = dict(ranks=8, network=network, protocol=protocol, contention=contention)
    res = bsim.simulate(_fan_out, **kw)
    if inert is None:
        assert res.inert == [] and "inert_settings" not in res.to_dict()
        return
    assert len(res.inert) == 1 and res.inert[0].startswith(inert)
    assert res.to_dict()["inert_settings"] == res.inert
    assert "no effect in this run: " + inert in res.summary()
    plain = network.replace(",g=1e-4", "").replace("g=1e-4", "").replace(",nics=4", "")
    without = bsim.simulate(_fan_out, **{**kw, "network": plain.rstrip(":")})
    assert without.finish.tolist() == res.finish.tolist()
