"""The software check of results/validation.md: meshsim's signed step-time error by the
software release that measured each published row, per GPU kind.

Each GPU kind's efficiencies are fitted once, on rows of several releases (Megatron-Core
r0.8.0 and NeMo 24.07 on H100, Megatron-Bridge containers 25.11 to 26.08 on Blackwell), but
each release runs the same plan at its own speed (kernels, libraries and framework
overheads change from one container to the next: public_runs.md keeps, for example, an
H100 Qwen3 30B-A3B row at 5,113 tokens/s/GPU in 26.02 and 9,058 in 26.02.01). A release
whose rows meshsim predicts slow on average (positive signed error) ran faster than the
fit; a fit used for a newer release than its rows inherits that bias. Nothing is fitted
here: the rows are the data sets' rows, simulated with the committed values.
"""
import re

SOFTWARE_TITLE = "Signed error by software release"

# A row's release: a Megatron-Bridge container version leading its note (optionally after
# "Bridge" or "Megatron-Bridge"), NeMo 24.07, or the data set its experiment belongs to.
_CONTAINER = re.compile(r"^(?:Megatron-Bridge |Bridge )?(\d\d\.\d\d(?:\.\d\d)?) ")
_BY_EXPERIMENT = [("public-h100-megatron-", "Megatron-Core r0.8.0 (2024-07)"),
                  ("public-h100-automodel-", "NeMo-Automodel (2025)"),
                  ("korthikanti-", "Megatron-LM (Korthikanti et al. 2022)"),
                  ("gpt3-175b-", "Megatron-LM (Korthikanti et al. 2022)")]


def release_of(row):
    """The software release that measured a validation row (validation_data.Row)."""
    if row.note.startswith("NeMo 24.07 "):
        return "NeMo 24.07"
    m = _CONTAINER.match(row.note)
    if m:
        return "Megatron-Bridge " + m.group(1)
    for prefix, release in _BY_EXPERIMENT:
        if row.experiment.startswith(prefix):
            return release
    return "other"


_EARLIER = ["Megatron-LM (Korthikanti et al. 2022)", "Megatron-Core r0.8.0 (2024-07)",
            "NeMo 24.07", "NeMo-Automodel (2025)"]


def _release_key(release):
    """Orders releases by date: the frameworks of 2022-2025, then the containers by version."""
    m = re.search(r"(\d\d)\.(\d\d)(?:\.(\d\d))?$", release)
    if m and release.startswith("Megatron-Bridge"):
        return (len(_EARLIER), int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    return (_EARLIER.index(release) if release in _EARLIER else len(_EARLIER) + 1, 0, 0, 0)


def software_lines(simulated):
    """The section. `simulated`: (GPU kind, Row, meshsim summary) for every row simulated."""
    groups = {}
    for gpu, row, summary in simulated:
        error = 100 * (summary["step_time_s"] / row.published_s - 1)
        groups.setdefault((release_of(row), gpu), []).append(error)
    lines = [f"## {SOFTWARE_TITLE}", "",
             "Every row above (fitted, kept out or held out alike), grouped by the software "
             "release that measured it and its GPU kind: meshsim's mean signed step-time error "
             "(positive: meshsim slower than the published run) and mean absolute error. Each "
             "GPU kind's efficiencies are fitted once on rows of several releases, while each "
             "release runs a plan at its own speed, so a release whose rows read slow on "
             "average ran faster than the fit (scripts/validation_software.py; nothing is "
             "fitted here).", "",
             "| release | GPU | rows | mean signed error | mean absolute error |",
             "|---|---|---|---|---|"]
    for (release, gpu), errors in sorted(groups.items(),
                                         key=lambda kv: (_release_key(kv[0][0]), kv[0][1])):
        signed = sum(errors) / len(errors)
        absolute = sum(abs(e) for e in errors) / len(errors)
        lines.append(f"| {release} | {gpu} | {len(errors)} | {signed:+.2f}% | {absolute:.2f}% |")
    return lines + [""]
