#!/usr/bin/env python3
"""Plots an `spmdsim memory --json` run: on top, each (model, strategy)'s peak by tag as a stacked bar with
the device capacity as a line; below, device 0's memory over simulated time by tag, one panel per
(model, strategy), the training step shaded (before it: the model state made on the devices).

    python3 plot_memory.py RUN.json PREFIX     writes PREFIX.png and PREFIX.svg

`spmdsim memory --plot PREFIX` runs this script on the run it has just written.
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

import plot_common  # noqa: E402

GIB = float(1 << 30)
# The capacity line is drawn to scale when the tallest bar reaches this fraction of it; otherwise the axis
# follows the data and the legend says the capacity is off the scale.
CAPACITY_IN_VIEW = 0.25
# A timeline is drawn from at most this many samples (each bin's fullest moment), so that a step of
# 100,000 ledger events still plots in seconds and the peaks stay in the picture.
TIMELINE_SAMPLES = 1500


def tag_colours(tags):
    """One colour per tag, the same in every panel."""
    palette = plt.get_cmap("tab10").colors
    return {tag: palette[i % len(palette)] for i, tag in enumerate(tags)}


def draw_capacity(axis, capacity_bytes, tallest_gib, label=True):
    """The capacity as a dashed line, or, when it is far above the data, a note in the legend."""
    capacity = capacity_bytes / GIB
    if tallest_gib >= CAPACITY_IN_VIEW * capacity:
        axis.axhline(capacity, color="black", linewidth=1.0, linestyle="--",
                     label=f"capacity {capacity:g} GiB" if label else None)
        axis.set_ylim(0, max(capacity, tallest_gib) * 1.05)
    else:
        axis.set_ylim(0, tallest_gib * 1.15)
        if label:
            axis.plot([], [], color="black", linewidth=1.0, linestyle="--",
                      label=f"capacity {capacity:g} GiB (off the scale)")


def plot_peaks(axis, run, colours, tallest):
    rows = run["rows"]
    labels = [f"{r['model']}\n{r['strategy']}" for r in rows]
    positions = range(len(rows))
    # A tag gets a legend entry when a bar or a timeline shows it (gradients live between the peaks).
    in_timelines = {run["timeline_tags"][tag] for r in rows if r["out_of_memory"] is None
                    for _, tag, delta in r["timeline"] if delta > 0}
    bottom = [0.0] * len(rows)
    for tag in run["tags"]:
        values = [r["at_peak_bytes"][tag] / GIB if r["out_of_memory"] is None else 0.0 for r in rows]
        if any(values) or tag in in_timelines:
            axis.bar(positions, values, bottom=bottom, label=tag, color=colours[tag], width=0.6)
            bottom = [b + v for b, v in zip(bottom, values)]
    capacity = rows[0]["capacity_bytes"] / GIB
    draw_capacity(axis, rows[0]["capacity_bytes"], tallest)
    for i in (i for i, r in enumerate(rows) if r["out_of_memory"] is not None):
        axis.text(i, capacity / 2, "out of\nmemory", ha="center", va="center", fontsize=8, color="firebrick")
    axis.set_xticks(list(positions), labels, fontsize=8)
    axis.set_ylabel("peak memory of the largest device (GiB)")
    axis.set_title("peak by tag")
    axis.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axis.grid(True, axis="y", linewidth=0.4, alpha=0.6)


def plot_timeline(axis, run, row, colours, tallest):
    """Device 0's bytes per tag after each ledger event, stacked as steps, on the peak panel's scale."""
    tags = run["timeline_tags"]
    held = [0.0] * len(tags)
    times, stacks = [0.0], [[0.0] * len(tags)]
    for time, tag, delta in row["timeline"]:
        held[tag] += delta
        if times and time == times[-1]:
            stacks[-1] = list(held)  # several events at one instant: keep the last state
        else:
            times.append(time)
            stacks.append(list(held))
    if len(times) > TIMELINE_SAMPLES:  # each bin's fullest moment
        start, end = times[0], times[-1]
        bins = {}
        for time, stack in zip(times, stacks):
            b = min(int((time - start) / (end - start) * TIMELINE_SAMPLES), TIMELINE_SAMPLES - 1)
            if b not in bins or sum(stack) > sum(bins[b][1]):
                bins[b] = (time, stack)
        times, stacks = zip(*(bins[b] for b in sorted(bins)))
    scale = 1e3  # ms
    xs = [t * scale for t in times]
    lower = [0.0] * len(xs)
    for name in run["tags"]:  # the peak panel's order, bottom to top
        index = tags.index(name)
        upper = [low + s[index] / GIB for low, s in zip(lower, stacks)]
        if any(s[index] for s in stacks):
            axis.fill_between(xs, lower, upper, step="post", color=colours[name], linewidth=0)
        lower = upper
    axis.axvspan(row["step_start_s"] * scale, row["step_end_s"] * scale, color="grey", alpha=0.12)
    draw_capacity(axis, row["capacity_bytes"], tallest, label=False)
    axis.set_title(f"{row['model']} {row['strategy']}: device 0", fontsize=9)
    axis.set_xlabel("simulated time (ms; step shaded)", fontsize=8)
    axis.set_ylabel("GiB", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.grid(True, linewidth=0.4, alpha=0.6)


def plot(run, prefix):
    if not run["rows"]:
        sys.exit("plot_memory.py: the run has no rows to plot")
    fitted = [r for r in run["rows"] if r["out_of_memory"] is None]
    colours = tag_colours(run["tags"])
    # One scale for every panel: the tallest peak, or the capacity itself when a row ran out of memory.
    tallest = max([r["peak_bytes"] / GIB for r in fitted] +
                  [r["capacity_bytes"] / GIB for r in run["rows"] if r["out_of_memory"] is not None])
    columns = max(1, min(4, len(fitted)))
    timeline_rows = (len(fitted) + columns - 1) // columns
    width = 13.0
    figure = plt.figure(figsize=(width, 4.2 + 2.6 * timeline_rows))
    grid = figure.add_gridspec(1 + timeline_rows, columns, height_ratios=[1.6] + [1.0] * timeline_rows)
    plot_peaks(figure.add_subplot(grid[0, :]), run, colours, tallest)
    for i, row in enumerate(fitted):
        plot_timeline(figure.add_subplot(grid[1 + i // columns, i % columns]), run, row, colours, tallest)

    plot_common.finish(figure, prefix, run,
                       f"spmdsim memory, {run['devices']} devices, per-device batch {run['per_device_batch']}, "
                       f"{plot_common.optimizer_label(run)}, {run['precision']}: {run['platform']}")
    plt.close(figure)


if __name__ == "__main__":
    plot_common.main(sys.argv, "plot_memory.py", "RUN", plot)
