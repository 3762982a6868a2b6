"""Speed of the topology network models, and the static contention estimate vs the fluid solver.

Prints: build time of the BSIM paper's 16x16x16 torus and of a 4,608-node fat-tree
(target < 2 s each), cost() and route() calls per second on random rank pairs,
the error of the tutorial's static contention count ``C * S / B`` against
the exact max-min fluid answer on small hand cases, and the host cost per
simulated message of a 4,096-rank halo exchange (``skeletons/halo2d.py``, 64x64
ranks, 512-byte edges) on the 16x16x16 torus (cores=1: 4,096 nodes) without
and with the fluid contention layer, relative to the flat Hockney model in the
same run (target: contention-aware torus <= 3x flat per message).

    python benchmarks/netmodel_speed.py [--pairs 200000] [--seed 1]
                                        [--halo-iterations 10] [--repeat 2] [--no-halo]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from netmodels import build_network, simulate_flows  # noqa: E402

TORUS = "torus:dims=16x16x16,link_bandwidth=1e10,cores=8,mapping=block"
FATTREE = "fattree:down=18x16x16,up=1x18x16,link_bandwidth=1.2e10,cores=8"


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_model(spec: str, npairs: int, rng: random.Random) -> None:
    model, t_build = timed(lambda: build_network(spec))
    nranks = model.num_nodes() * model.cores
    _, t_prep = timed(lambda: model.prepare(nranks))
    links, t_links = timed(model.links)
    print(f"{spec}")
    print(f"  nodes {model.num_nodes()}, ranks {nranks}, directed links {len(links)}")
    print(f"  build {t_build:.3f} s + prepare({nranks}) {t_prep:.3f} s "
          f"+ links() {t_links:.3f} s = {t_build + t_prep + t_links:.3f} s (target < 2 s)")
    pairs = [(rng.randrange(nranks), rng.randrange(nranks)) for _ in range(npairs)]
    cost = model.cost
    _, t_cost = timed(lambda: [cost(a, b, 65536) for a, b in pairs])
    print(f"  cost():  {npairs / t_cost:,.0f} calls/s on random pairs")
    route = model.route
    _, t_route = timed(lambda: [route(a, b) for a, b in pairs])
    print(f"  route(): {npairs / t_route:,.0f} calls/s (first use: computes and caches)")
    _, t_route2 = timed(lambda: [route(a, b) for a, b in pairs])
    print(f"  route(): {npairs / t_route2:,.0f} calls/s (cached)")


def static_estimate(flows, capacity):
    """Tutorial's C_i count: finish = start + max over links of C * nbytes / B."""
    count = Counter(link for _, links, _, _ in flows for link in set(links))
    return {fid: start + max((count[lk] * nbytes / capacity[lk] for lk in links), default=0.0)
            for fid, links, nbytes, start in flows}


def contention_cases():
    tree = build_network("fattree:leaf_ports=36,oversubscription=3,leaves=2,link_bandwidth=1")
    tree_cap = {lk: bw for lk, (bw, _) in tree.links().items()}
    return [
        ("2 flows share 1 link", [("a", ["l"], 1.0, 0.0), ("b", ["l"], 1.0, 0.0)], {"l": 1.0}),
        ("staggered A@0 B@2, 10 B", [("A", ["l"], 10.0, 0.0), ("B", ["l"], 10.0, 2.0)],
         {"l": 1.0}),
        ("max-min a=1,b=2: f1(a,b) f2(a) f3(b,4 B)",
         [("f1", ["a", "b"], 1.0, 0.0), ("f2", ["a"], 1.0, 0.0), ("f3", ["b"], 4.0, 0.0)],
         {"a": 1.0, "b": 2.0}),
        ("ds1 3:1, 27 cross-leaf flows", [(i, tree.route_nodes(i, 27 + i), 1.0, 0.0)
                                          for i in range(27)], tree_cap),
        ("ds1 3:1, 27 cross-leaf flows of 1..27 B", [(i, tree.route_nodes(i, 27 + i),
                                                      float(i + 1), 0.0) for i in range(27)],
         tree_cap),
    ]


def bench_contention() -> None:
    print("static contention count (C*S/B) vs exact fluid max-min finish times")
    for label, flows, cap in contention_cases():
        fluid = simulate_flows(flows, cap)
        static = static_estimate(flows, cap)
        errs = [(static[f] - fluid[f]) / (fluid[f] - start)
                for f, _, _, start in flows if fluid[f] > start]
        print(f"  {label:<42} max |error| of transfer time {max(map(abs, errs)) * 100:5.1f} %")


HALO_CASES = [
    ("hockney (flat)", "hockney:latency=1e-6,bandwidth=1e10", None),
    ("torus 16^3", "torus:dims=16x16x16,link_bandwidth=1e10,cores=1", None),
    ("torus 16^3 + fluid", "torus:dims=16x16x16,link_bandwidth=1e10,cores=1", "fluid"),
]


def bench_halo_contention(iterations: int, repeat: int) -> None:
    """Host CPU seconds per simulated message; best of *repeat* runs per case."""
    import bsim
    from skeletons.halo2d import main as halo
    kwargs = dict(px=64, py=64, nx=64 * 64, ny=64 * 64, iterations=iterations)
    print(f"halo2d 64x64 ranks, {iterations} iterations, 512-byte edges: host CPU per message "
          f"(best of {repeat})")
    for protocol in ("bsim", "loggp"):
        flat = None
        for label, net, contention in HALO_CASES:
            best = None
            for _ in range(repeat):
                gc.collect()
                t0 = time.process_time()
                res = bsim.simulate(halo, ranks=4096, network=net, protocol=protocol,
                                    kwargs=kwargs, contention=contention)
                cpu = time.process_time() - t0
                per_msg = cpu / int(res.messages.sum())
                best = per_msg if best is None else min(best, per_msg)
                del res
            flat = best if flat is None else flat
            print(f"  {protocol:<6} {label:<20} {best * 1e6:7.2f} us/message "
                  f"{best / flat:5.2f}x flat")
    print("  target: contention-aware torus <= 3x flat per message")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--halo-iterations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-halo", action="store_true", help="skip the engine benchmark")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    for spec in (TORUS, FATTREE):
        bench_model(spec, args.pairs, rng)
    bench_contention()
    if not args.no_halo:
        bench_halo_contention(args.halo_iterations, args.repeat)


if __name__ == "__main__":
    main()
