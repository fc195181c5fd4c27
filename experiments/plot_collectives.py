#!/usr/bin/env python3
"""Plots an `spmdsim collectives --json` sweep: time and busbw against message size, log-log.

    python3 plot_collectives.py SWEEP.json PREFIX     writes PREFIX.png and PREFIX.svg

One column per collective: time on the top row, busbw below. One colour per algorithm, one line style and
marker per device count; filled markers are rows that ran on real data, hollow ones ran abstract (shapes
only). `spmdsim collectives --plot PREFIX` runs this script on the sweep it has just written.
"""

import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

import plot_common  # noqa: E402

LINE_STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def size_label(value, _position=None):
    """Bytes as sizes are given on the command line: 8, 1K, 64M, 8G (powers of 1024)."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}"


def plot(sweep, prefix):
    rows = [r for r in sweep["rows"] if r["time_us"] > 0]
    collectives = list(dict.fromkeys(r["collective"] for r in rows))
    if not collectives:
        sys.exit("plot_collectives.py: the sweep has no rows to plot")
    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    device_counts = sorted({r["devices"] for r in rows})
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {a: colours[i % len(colours)] for i, a in enumerate(algorithms)}
    style = {p: (LINE_STYLES[i % len(LINE_STYLES)], MARKERS[i % len(MARKERS)]) for i, p in enumerate(device_counts)}

    columns = len(collectives)
    # Wide enough for the title and the legend even with one panel; the legend wraps into rows.
    width = max(4.2 * columns, 8.0)
    legend_columns = max(1, int(width // 2))
    legend_rows = math.ceil((len(algorithms) + len(device_counts) + 2) / legend_columns)
    legend_height = 0.22 * legend_rows
    figure, axes = plt.subplots(2, columns, figsize=(width, 7.0 + legend_height), squeeze=False, sharex="col")
    for column, collective in enumerate(collectives):
        time_axis, busbw_axis = axes[0][column], axes[1][column]
        for algorithm in algorithms:
            for p in device_counts:
                series = sorted(
                    (r for r in rows if r["collective"] == collective and r["algorithm"] == algorithm
                     and r["devices"] == p),
                    key=lambda r: r["size_bytes"])
                if not series:
                    continue
                line_style, marker = style[p]
                sizes = [r["size_bytes"] for r in series]
                for axis, key in ((time_axis, "time_us"), (busbw_axis, "busbw_GB_per_s")):
                    values = [r[key] for r in series]
                    axis.plot(sizes, values, line_style, color=colour[algorithm], linewidth=1.3)
                    for mode, face in (("real", colour[algorithm]), ("abstract", "white")):
                        points = [(s, v) for s, v, r in zip(sizes, values, series) if r["mode"] == mode]
                        if points:
                            axis.plot(*zip(*points), marker, color=colour[algorithm], markerfacecolor=face,
                                      markersize=4, linestyle="none")
        jax_name = next(r["jax_name"] for r in rows if r["collective"] == collective)
        title = collective if jax_name == collective else f"{collective} ({jax_name})"
        time_axis.set_title(title)
        time_axis.set_ylabel("time (us)" if column == 0 else "")
        busbw_axis.set_ylabel("busbw (GB/s)" if column == 0 else "")
        busbw_axis.set_xlabel("message size S (bytes)")
        for axis in (time_axis, busbw_axis):
            axis.set_xscale("log", base=2)
            axis.set_yscale("log")
            axis.xaxis.set_major_locator(LogLocator(base=4))
            axis.xaxis.set_major_formatter(FuncFormatter(size_label))
            axis.tick_params(axis="x", labelrotation=45, labelsize=8)
            axis.tick_params(axis="y", labelsize=8)
            axis.grid(True, which="major", linewidth=0.4, alpha=0.6)

    handles = [Line2D([], [], color=colour[a], linewidth=2, label=a) for a in algorithms]
    handles += [Line2D([], [], color="black", linestyle=style[p][0], marker=style[p][1], markersize=4,
                       label=f"p = {p}") for p in device_counts]
    handles += [Line2D([], [], color="black", marker="o", markerfacecolor="black", linestyle="none", markersize=4,
                       label="real data"),
                Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle="none", markersize=4,
                       label="abstract")]
    figure.legend(handles=handles, loc="lower center", ncol=legend_columns, fontsize=8, frameon=False)
    plot_common.finish(figure, prefix, sweep, f"spmdsim collectives, {sweep['dtype']}: {sweep['platform']}",
                       layout_rect=(0, (legend_height + 0.1) / (7.0 + legend_height), 1, 1))
    plt.close(figure)


if __name__ == "__main__":
    plot_common.main(sys.argv, "plot_collectives.py", "SWEEP", plot)
