"""The ranking check of results/validation.md: does meshsim order the published runs of one
model on one GPU kind (different precisions, parallelism, batch sizes, GPU counts or
software) as the published throughputs do?

A planner is used to pick the fastest of several plans for one model and cluster, so the
order of its predictions matters as much as their errors. Every pair of published rows
with the same model file and the same GPU kind is compared on throughput per GPU (tokens
per second per GPU: the step's tokens over the step time and the GPU count, so that runs
of different sizes compare); a pair is ordered right when meshsim's faster row is the
published faster row, and meshsim separates the two (its throughputs more than TIE
apart: a planner could not choose between two plans it predicts alike). Pairs whose
published throughputs lie within CLOSE of each other are close: different containers and
measurement noise move rows by that much, and meshsim may order them either way or not
separate them.
Nothing here is fitted: the rows are simulated with the committed values, as in the data
sets' sections.
"""
import itertools
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLOSE = 0.05  # published throughputs within 5 % of each other: a close pair
TIE = 0.005  # meshsim's throughputs within 0.5 % of each other: meshsim does not separate them
RANKING_TITLE = "Ranking: one model's runs on one GPU kind"


def model_of(experiment):
    """The model an experiment trains: the stem of the file its `model:` key names, or the
    `name` of a model written inline (the bundled ones name it as the file they copy)."""
    path = os.path.join(ROOT, "workloads/experiments", experiment + ".yaml")
    with open(path) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("model:"):
            continue
        value = line.split(":", 1)[1].split("#", 1)[0].strip()
        if value:
            return os.path.splitext(os.path.basename(value))[0]
        for inner in lines[i + 1:]:
            if not inner.startswith(" "):
                break
            if inner.strip().startswith("name:"):
                return inner.split(":", 1)[1].split("#", 1)[0].strip()
    return experiment


def throughputs(summary, published_s):
    """(published, meshsim) tokens per second per GPU of one row."""
    tokens = summary["tokens_per_s"] * summary["step_time_s"]
    gpus = summary["gpus"]
    return tokens / (published_s * gpus), tokens / (summary["step_time_s"] * gpus)


def ranking_lines(simulated, model=model_of):
    """The section, and its one-line result for the summary (None without pairs).
    `simulated`: (GPU kind, Row, meshsim summary) for every row simulated; `model`: the
    model a row's experiment trains (model_of by default)."""
    groups = {}
    for gpu, row, summary in simulated:
        pub, sim = throughputs(summary, row.published_s)
        groups.setdefault((gpu, model(row.experiment)), []).append((row, pub, sim))
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    pairs = right = wide = wide_right = 0
    wrong = []
    for (gpu, model), rows in sorted(groups.items()):
        for (a, pa, sa), (b, pb, sb) in itertools.combinations(rows, 2):
            close = abs(pa / pb - 1) < CLOSE
            tie = abs(sa / sb - 1) <= TIE
            ok = (close and tie) or (not tie and (pa > pb) == (sa > sb))
            pairs += 1
            right += ok
            if not close:
                wide += 1
                wide_right += ok
            if not ok:
                wrong.append((gpu, model, a, pa, sa, b, pb, sb, close))
    lines = [f"## {RANKING_TITLE}", "",
             "Does meshsim order the published runs of one model on one GPU kind (different "
             "precisions, parallelism, batch sizes, GPU counts or software) as their published "
             "throughputs do? Every pair of rows above with the same model file and GPU kind is "
             "compared on tokens per second per GPU; a pair is ordered right when meshsim's "
             "faster row is the published faster row and meshsim separates them (its "
             f"throughputs more than {100 * TIE:g} % apart). Pairs whose published throughputs "
             f"lie within {100 * CLOSE:g} % of each other are close: containers and noise move "
             "rows by that much, and meshsim may order them either way or not separate them. "
             "Nothing is fitted here (scripts/validation_ranking.py).", ""]
    if not pairs:
        return lines + ["No model has two rows on one GPU kind.", ""], None
    headline = (f"Ordered as published: **{right} of {pairs}** pairs; **{wide_right} of {wide}** "
                f"pairs more than {100 * CLOSE:g} % apart.")
    lines += [headline, "",
              "| GPU | model | run | published tokens/s/GPU | meshsim tokens/s/GPU | "
              "published rank | meshsim rank |", "|---|---|---|---|---|---|---|"]
    for (gpu, model), rows in sorted(groups.items()):
        by_pub = sorted(rows, key=lambda x: -x[1])
        by_sim = sorted(rows, key=lambda x: -x[2])
        for row, pub, sim in by_pub:
            lines.append(f"| {gpu} | {model} | {row.experiment} | {pub:,.0f} | {sim:,.0f} | "
                         f"{by_pub.index((row, pub, sim)) + 1} | "
                         f"{by_sim.index((row, pub, sim)) + 1} |")
    lines += [""]
    if wrong:
        lines += ["Pairs meshsim orders the other way or does not separate (published and "
                  "meshsim throughput of the first over the second):", ""]
        for gpu, model, a, pa, sa, b, pb, sb, close in wrong:
            lines.append(f"- {gpu}, {model}: {a.experiment} against {b.experiment}: published "
                         f"{pa / pb:.3f}, meshsim {sa / sb:.3f}"
                         + (" (meshsim does not separate them)" if abs(sa / sb - 1) <= TIE
                            else " (close)" if close else ""))
        lines += [""]
    return lines, headline
