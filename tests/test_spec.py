"""One spec grammar and one registry base for everything chosen by name."""

from __future__ import annotations

import pytest

import bsim
from bsim.engine.noise import build_noise
from bsim.engine.protocols import PROTOCOLS, build_protocol
from netmodels import build_network
from netmodels.base import REGISTRY, NetworkSpecError
from netmodels.collective_costs import (
    COLLECTIVE_MODELS,
    CollectiveSpecError,
    build_collective_model,
)
from netmodels.mapping import MAPPINGS, MappingError, build_mapping
from netmodels.registry import Registry
from netmodels.spec import SpecError, parse_spec, parse_value, split_spec
from skeletons import registry as skeletons
from skeletons.registry import Param, Skeleton


@pytest.mark.parametrize("text,value", [
    ("3", 3), ("-2", -2), ("1e-6", 1e-6), ("2.5", 2.5), ("true", True), ("False", False),
    ("16x16x16", "16x16x16"), ("a/b/c", "a/b/c"), (" ring ", "ring"),
])
def test_values_are_typed(text, value):
    """true/false -> bool, then int, then float, else the stripped string."""
    got = parse_value(text)
    assert got == value and type(got) is type(value)


def test_split_keeps_raw_strings_and_lowercases_the_name():
    """NAME:K=V,K=V -> (name, raw values); blank items skipped."""
    assert split_spec(" Torus:dims=4x4, link_bandwidth=1e9,") == (
        "torus", {"dims": "4x4", "link_bandwidth": "1e9"})
    assert split_spec("hockney") == ("hockney", {})
    assert parse_spec("loggp:L=1e-6,o=2") == ("loggp", {"L": 1e-6, "o": 2})


def test_semicolons_only_where_allowed():
    """Mapping specs may separate items with ';'; elsewhere ';' stays in the value (nesting)."""
    assert split_spec("nodevolume:grid=4x4;node=2x2", separators=",;")[1] == {
        "grid": "4x4", "node": "2x2"}
    assert split_spec("twolevel:intra=hockney:latency=1;bandwidth=2")[1] == {
        "intra": "hockney:latency=1;bandwidth=2"}


@pytest.mark.parametrize("build,spec,error,message", [
    (build_network, "hockney:latency", NetworkSpecError,
     r"network spec 'hockney:latency': expected KEY=VALUE, got 'latency'"),
    (build_network, "nosuch", NetworkSpecError, r"unknown network model 'nosuch'; valid: "),
    (build_network, "hockney:lat=1", NetworkSpecError,
     r"network model 'hockney': unknown parameter\(s\) lat; valid: latency"),
    (build_protocol, "nosuch", SpecError, r"unknown protocol 'nosuch'; valid: bsim, loggops, loggp"),
    (build_protocol, "loggp:eager=1", SpecError,
     r"protocol 'loggp': unknown parameter\(s\) eager; valid: eager_limit"),
    (build_collective_model, "nosuch", CollectiveSpecError,
     r"unknown collective model 'nosuch'; valid: analytic, clog, table"),
    (build_collective_model, "clog:c", CollectiveSpecError, r"expected KEY=VALUE"),
    (build_mapping, "nosuch:nodes=2", MappingError, r"unknown mapping 'nosuch'; valid: block"),
    (build_mapping, "block:nodes=2", MappingError, r"unknown key\(s\) nodes; valid: cores"),
    (build_noise, "jitter:x=1", SpecError, r"unknown noise model 'jitter'"),
])
def test_every_registry_names_what_is_wrong_and_what_is_valid(build, spec, error, message):
    """Each kind's errors are SpecErrors (ValueErrors) naming the spec and the valid choices."""
    with pytest.raises(error, match=message):
        build(spec)
    assert issubclass(error, SpecError) and issubclass(error, ValueError)


def test_the_registries_are_one_kind():
    """Networks, protocols, collective models and mappings share the Registry base."""
    for reg, name in [(REGISTRY, "torus"), (PROTOCOLS, "loggp"), (COLLECTIVE_MODELS, "clog"),
                      (MAPPINGS, "nodevolume")]:
        assert isinstance(reg, Registry) and name in reg and reg.lookup(name).name == name


def test_nested_specs_build():
    """A twolevel network nests two specs; aliases and ';' mappings still build."""
    net = build_network("twolevel:intra=hockney:latency=1e-7;bandwidth=1e10,"
                        "inter=hockney:latency=1e-6;bandwidth=1e9,cores=4")
    assert net.name == "twolevel"
    assert build_mapping("cyclic:nodes=3").name == "roundrobin"
    m = build_mapping("nodevolume:grid=4x4x4x4;node=2x2x1x1")
    m.prepare(256)
    assert m.nodes[:2] == [0, 0] and m.nodes[2] == 1   # x fastest: ranks 0, 1 share a node


def test_registering_twice_is_refused():
    """Two different items under one name are an error; the same item again is not."""
    reg: Registry[type] = Registry("widget")

    class A:
        name = "a"

    class B:
        name = "a"

    reg.register(A)
    reg.register(A)
    with pytest.raises(ValueError, match="widget 'a' registered twice"):
        reg.register(B)


def test_skeleton_defaults_come_from_main():
    """A skeleton's defaults are main's keyword defaults; Params must match them one to one."""
    def main(n: int = 8, t: float = 1e-3) -> None:
        bsim.add_time(t * n)

    sk = Skeleton("demo", main, "demo", params={"n": Param("size"), "t": Param("seconds")})
    assert sk.defaults == {"n": 8, "t": 1e-3}
    assert sk.resolve({"n": "4"}) == {"n": 4, "t": 1e-3}
    with pytest.raises(ValueError, match=r"main's keyword parameter\(s\) t need a Param"):
        Skeleton("demo", main, "demo", params={"n": Param("size")})
    with pytest.raises(ValueError, match=r"Param\(s\) m are not keyword parameters of main"):
        Skeleton("demo", main, "demo", params={"n": Param("size"), "t": Param("s"),
                                                "m": Param("x")})


def test_builtin_skeleton_defaults_equal_their_mains():
    """Every registered skeleton's default is its main's (MILC's nprocs is the documented one)."""
    import inspect
    for name in skeletons.names():
        sk = skeletons.get(name)
        own = {k: p.default for k, p in inspect.signature(sk.main).parameters.items()
               if p.default is not inspect.Parameter.empty}
        differ = {k for k in sk.defaults if sk.defaults[k] != own[k]}
        assert differ == ({"nprocs"} if name.startswith("milc") else set()), name
