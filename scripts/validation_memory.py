"""The memory check of results/validation.md: every published run ran on its GPUs, so the
peak memory meshsim predicts for it must fit its GPU's memory.

A row that reads over its budget is a plan meshsim says cannot run although it did: its
memory model over-counts what the framework keeps, or the experiment's plan (the settings
the source leaves unstated) is not the one that ran. Nothing is fitted here: the rows are
the data sets' rows, simulated with the committed values (each summary's peak_memory_gib,
the worst GPU's simulated peak, against memory_budget_gib).
"""

MEMORY_TITLE = "Memory: every published run fits its GPUs"

# The rows listed closest to their budget besides those over it.
TIGHTEST = 5


def _headroom(summary):
    """GiB left of the budget at meshsim's peak (negative: over)."""
    return summary["memory_budget_gib"] - summary["peak_memory_gib"]


def memory_over(simulated):
    """The rows meshsim says do not fit: (GPU kind, Row, summary), most over first."""
    over = [item for item in simulated if not item[2]["fits"]]
    return sorted(over, key=lambda item: _headroom(item[2]))


def memory_headline(simulated):
    """One line for the summary: how many published runs fit meshsim's peak."""
    over = memory_over(simulated)
    text = (f"{len(simulated) - len(over)} of {len(simulated)} published runs fit their GPUs' "
            "memory at meshsim's peak")
    return text + (f"; **{len(over)} do not**" if over else "")


def _row(gpu, row, summary):
    return (f"| {row.experiment} | {gpu} | {summary['peak_memory_gib']:.1f} | "
            f"{summary['memory_budget_gib']:.1f} | {_headroom(summary):+.1f} |")


def memory_lines(simulated):
    """The section. `simulated`: (GPU kind, Row, meshsim summary) for every row simulated."""
    over = memory_over(simulated)
    lines = [f"## {MEMORY_TITLE}", "",
             "Every row above ran on the GPUs its table names, so meshsim's peak memory for it "
             "(the worst GPU's simulated peak) must fit that GPU's memory; a row over its "
             "budget is a plan meshsim says cannot run although it did "
             "(scripts/validation_memory.py; nothing is fitted here). "
             f"{memory_headline(simulated)}.", ""]
    header = ["| run | GPU | meshsim peak GiB | budget GiB | headroom GiB |",
              "|---|---|---|---|---|"]
    if over:
        lines += ["Over their budget:", ""] + header
        lines += [_row(*item) for item in over] + [""]
    fitting = sorted((item for item in simulated if item[2]["fits"]),
                     key=lambda item: _headroom(item[2]))[:TIGHTEST]
    if fitting:
        lines += [f"Closest to their budget of those that fit ({len(fitting)}):", ""] + header
        lines += [_row(*item) for item in fitting]
    return lines + [""]
