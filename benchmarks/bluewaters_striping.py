"""The modeling tutorial's Blue Waters inter-supernode contention, with striping.

The modeling tutorial ("II: Novel Architectures: Blue Waters", slides "Communication
Pattern Cost", "2D Example", "+X Dim", "+Y Dim", "All-to-all example: inter-node")
prices a message as ``T_msg = sum L_i + max(C_i * (S / N_i) / B_i)`` and gives the
contention ``C_i`` (in units of messages, ``/N`` for striping) of a 2-D decomposition
with 32x32 processes per supernode (SN), and of an all-to-all between SNs.

What is computed here (nothing is sampled):

* ``+X`` and ``+Y``: the whole periodic nearest-neighbour exchange of a 608 x 864
  process grid on 513 SNs (19 x 27 SNs of 32 x 32, ``GridMapping2D``; every rank
  sends one message), ``routing=indirect``.  Striped loads
  (:func:`netmodels.bluewaters_striping.striped_step_loads`): each inter-SN message
  goes ``1/N`` over each of the ``N`` (127 or 128) middle SNs of its drawer.  The
  table gives, per link class, the largest load on any link (all steps), the
  largest per route step (intra-SN routes, first step in the source SN, D, middle
  SN, destination SN), and the largest load with the model's single route
  (``link_loads``, no striping).
* all-to-all inter-node: 8 SNs (the tutorial's "8 in example"), block mapping, one
  of DNS3D's transposes: core ``i`` of each SN sends one message to core ``i`` of
  every other SN; ``routing=direct`` ("best case using direct routing").

Then ``T_msg`` for 8 KB, 64 KB and 1 MB: ``0.5 us + sum L_i`` of one inter-SN route
of the case, ``+ max_i C_i * S / B_i`` with the tutorial's ``C_i`` (W taken as the
messages of a P7 chip, each chip having its own W link, which the tutorial does not
list), bsim's striped maxima, and
bsim's single-route maxima.

    python benchmarks/bluewaters_striping.py
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netmodels import BlueWaters, GridMapping2D, percs_cost  # noqa: E402
from netmodels.bluewaters_striping import node_pair_counts, striped_step_loads  # noqa: E402
from netmodels.topology import link_loads  # noqa: E402

SN_COLS, SN_ROWS = 19, 27          # 513 SNs
PX, PY = 32 * SN_COLS, 32 * SN_ROWS
SIZES = (8 * 1024, 64 * 1024, 1024 * 1024)
CLASSES = ("W+", "LI", "Lr", "D", "W-")
STEPS = ("intra", "first", "D", "middle", "last")

# the tutorial's C per class (W: messages per P7 chip, whose own W link carries them;
# implied by the layout of 4x2 ranks per chip, not printed: a QCM's +X edge of 4 ranks
# is 2 chips of 2, its +Y edge of 8 ranks 2 chips of 4)
TUTORIAL = {
    "+X": {"W+": ("2", 2.0), "LI": ("4 + 8/128", 4 + 8 / 128), "Lr": ("8/128", 8 / 128),
           "D": ("2x 8/128", 2 * 8 / 128), "W-": ("2", 2.0)},
    "+Y": {"W+": ("4", 4.0), "LI": ("8 + 32/128", 8 + 32 / 128),
           "Lr": ("8 + 32/128", 8 + 32 / 128), "D": ("2x 32/128", 2 * 32 / 128),
           "W-": ("4", 4.0)},
}


def kind(link: object) -> str:
    return link[0]  # type: ignore[index, no-any-return]


def class_max(loads: dict[object, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for link, value in loads.items():
        out[kind(link)] = max(out.get(kind(link), 0.0), value)
    return out


def t_msg(model: BlueWaters, route: tuple[object, ...], c: dict[str, float], s: float) -> float:
    """``latency + sum L_i`` over *route*, ``+ max C_i * S / B_i`` over every loaded class."""
    hops = [(model._class[kind(link)][0], model._class[kind(link)][1], 1.0, c.get(kind(link), 0))
            for link in route]
    hops += [(0.0, model._class[k][1], 1.0, v) for k, v in c.items()]
    return model.latency + percs_cost(s, hops)


def grid_case(model: BlueWaters, name: str) -> None:
    if name == "+X":
        pairs = [(x + PX * y, (x + 1) % PX + PX * y) for y in range(PY) for x in range(PX)]
    else:
        pairs = [(x + PX * y, x + PX * ((y + 1) % PY)) for y in range(PY) for x in range(PX)]
    t0 = time.perf_counter()
    counts = node_pair_counts(model, pairs)
    steps = striped_step_loads(model, counts)
    total: dict[object, float] = {}
    for loads in steps.values():
        for link, v in loads.items():
            total[link] = total.get(link, 0.0) + v
    single: Counter[object] = Counter()
    for (a, b, *chips), n in counts.items():
        for link in model.chip_route(a, b, (chips[0], chips[1])):
            single[link] += n
    striped, unstriped = class_max(total), class_max(dict(single))
    per_step = {step: class_max(loads) for step, loads in steps.items()}
    d_values = Counter(round(v, 6) for link, v in total.items() if kind(link) == "D")
    print(f"\n{name}: {len(pairs):,} messages on {model.supernodes} SNs "
          f"({time.perf_counter() - t0:.1f} s)")
    print(f"{'class':5} {'tutorial C':>12} {'=':>7} {'bsim max':>9}   "
          + " ".join(f"{s:>7}" for s in STEPS) + f" {'1 route':>8}")
    for k in CLASSES:
        text, value = TUTORIAL[name][k]
        cells = " ".join(f"{per_step[s][k]:7.4f}" if k in per_step[s] else f"{'-':>7}"
                         for s in STEPS)
        print(f"{k:5} {text:>12} {value:7.4f} {striped.get(k, 0):9.4f}   {cells} "
              f"{unstriped.get(k, 0):8.0f}")
    common = ", ".join(f"{v:.4f} x{n}" for v, n in d_values.most_common(3))
    print(f"D links used {sum(d_values.values()):,} of {513 * 512:,}; commonest loads: {common}")
    a, b = next((a, b) for a, b, *_ in counts if a // 32 != b // 32)
    route = model.route_nodes(a, b)
    tutorial = {k: v for k, (_, v) in TUTORIAL[name].items()}
    times_table(name, model, route, tutorial, striped, dict(unstriped))


def times_table(name: str, model: BlueWaters, route: tuple[object, ...],
                tutorial: dict[str, float], striped: dict[str, float],
                unstriped: dict[str, float]) -> None:
    print(f"T_msg {name} (us), route {' '.join(kind(link) for link in route)}")
    for s in SIZES:
        cols = [t_msg(model, route, c, s) * 1e6 for c in (tutorial, striped, unstriped)]
        print(f"  S = {s // 1024:5d} KB   tutorial {cols[0]:10.2f}   bsim striped "
              f"{cols[1]:10.2f}   bsim 1 route {cols[2]:10.2f}")


def all_to_all(sns: int = 8) -> None:
    model = BlueWaters(supernodes=sns, routing="direct")
    model.prepare(sns * 1024)
    pairs = [(1024 * p + i, 1024 * q + i) for p in range(sns) for q in range(sns) if p != q
             for i in range(1024)]
    loads = link_loads(model, pairs)
    per_class = class_max(dict(loads))
    out_of_sn0 = sum(v for link, v in loads.items() if kind(link) == "D" and link[1] == 0)  # type: ignore[index]
    print(f"\nall-to-all inter-node: {sns} SNs, core i of each SN to core i of every other "
          f"SN ({len(pairs):,} messages), direct routing")
    print(f"  tutorial C = #SN x 1024 = {sns * 1024} on D;  bsim: {per_class['D']:.0f} on each "
          f"D link, {out_of_sn0:.0f} = (#SN - 1) x 1024 over the {sns - 1} D links of an SN; "
          f"W+ {per_class['W+']:.0f}, LI {per_class.get('LI', 0):.0f}, "
          f"Lr {per_class.get('Lr', 0):.0f}")
    route = model.route_nodes(0, 32)
    tutorial = dict(per_class, D=float(sns * 1024))
    times_table("all-to-all", model, route, tutorial, per_class, per_class)


def main() -> None:
    t0 = time.perf_counter()
    model = BlueWaters(supernodes=513, routing="indirect", mapping=GridMapping2D(PX, PY))
    model.prepare(PX * PY)
    print(f"2-D exchange, {PX} x {PY} processes on {SN_COLS} x {SN_ROWS} SNs, "
          f"routing=indirect; loads in messages (C_i / N_i)")
    for name in ("+X", "+Y"):
        grid_case(model, name)
    all_to_all()
    print(f"\nhost {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
