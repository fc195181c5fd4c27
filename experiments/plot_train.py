#!/usr/bin/env python3
"""Plots an `spmdsim train --json` run: throughput, scaling efficiency and MFU against devices, the step time
broken into compute, exposed communication, host transfer and idle, stacked per device count, and the
communication on its own scale: exposed (the program waited) and hidden (dp-overlap's stream ran while the
program computed).

    python3 plot_train.py RUN.json PREFIX     writes PREFIX.png and PREFIX.svg

`spmdsim train --plot PREFIX` runs this script on the run it has just written.
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

import plot_common  # noqa: E402

# The parts of a step, bottom to top, as the JSON rows name them.
PARTS = [("compute_us", "compute"), ("communication_us", "exposed communication"), ("transfer_us", "host transfer"),
         ("idle_us", "idle")]
# The communication, bottom to top.
COMMUNICATION = [("communication_us", "exposed"), ("hidden_communication_us", "hidden (during compute)")]


def stacked_bars(axis, labels, rows, parts, colors):
    bottom = [0.0] * len(rows)
    for (key, label), color in zip(parts, colors):
        values = [r[key] for r in rows]
        axis.bar(labels, values, bottom=bottom, label=label, color=color)
        bottom = [b + v for b, v in zip(bottom, values)]
    axis.legend(fontsize=8, frameon=False)


def plot(run, prefix):
    if not run["rows"]:
        sys.exit("plot_train.py: the run has no rows to plot")
    rows = sorted(run["rows"], key=lambda r: r["devices"])
    devices = [r["devices"] for r in rows]
    labels = [str(p) for p in devices]
    width = 17.0
    figure, (throughput_axis, efficiency_axis, breakdown_axis, communication_axis) = plt.subplots(
        1, 4, figsize=(width, 4.4))

    throughput_axis.plot(devices, [r["samples_per_s"] for r in rows], "o-", linewidth=1.3, markersize=4)
    throughput_axis.set_xscale("log", base=2)
    throughput_axis.set_xticks(devices, labels)
    throughput_axis.set_ylabel("throughput (samples/s)")
    throughput_axis.set_title("throughput")

    efficiency_axis.plot(devices, [r["efficiency"] for r in rows], "o-", linewidth=1.3, markersize=4,
                         label="scaling efficiency")
    # Runs written before MFU was added have no mfu field.
    if all("mfu" in r for r in rows):
        efficiency_axis.plot(devices, [r["mfu"] for r in rows], "s--", linewidth=1.3, markersize=4, label="MFU")
        efficiency_axis.legend(fontsize=8)
    efficiency_axis.axhline(1.0, color="grey", linewidth=0.6, linestyle="--")
    efficiency_axis.set_xscale("log", base=2)
    efficiency_axis.set_xticks(devices, labels)
    efficiency_axis.set_ylim(bottom=0)
    efficiency_axis.set_ylabel(f"{run['scaling']} scaling efficiency; MFU")
    efficiency_axis.set_title(f"efficiency against p = {devices[0]}")

    # The default colour cycle's first four, so that exposed communication has the same colour in both panels.
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    stacked_bars(breakdown_axis, labels, rows, PARTS, colors[:4])
    breakdown_axis.set_ylabel("time per step (us, mean over devices)")
    breakdown_axis.set_title("step time")

    stacked_bars(communication_axis, labels, rows, COMMUNICATION, [colors[1], colors[4]])
    communication_axis.set_ylabel("communication per step (us, mean over devices)")
    communication_axis.set_title("communication")

    for axis in (throughput_axis, efficiency_axis, breakdown_axis, communication_axis):
        axis.set_xlabel("devices")
        axis.tick_params(labelsize=8)
        axis.grid(True, which="major", linewidth=0.4, alpha=0.6)
    plot_common.finish(figure, prefix, run,
                       f"spmdsim train, {run['strategy']}, {plot_common.optimizer_label(run)}, {run['precision']}: "
                       f"{run['platform']}")
    plt.close(figure)


if __name__ == "__main__":
    plot_common.main(sys.argv, "plot_train.py", "RUN", plot)
