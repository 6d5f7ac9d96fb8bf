"""The memory check of results/validation.md (scripts/validation_memory.py): a published
run that meshsim says does not fit its GPUs is listed, most over first."""
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import validation_memory  # noqa: E402
from validation_data import Row  # noqa: E402


def summary(peak, budget=80.0):
    return {"peak_memory_gib": peak, "memory_budget_gib": budget, "fits": peak <= budget}


def test_rows_over_their_budget_are_listed_most_over_first():
    rows = [("H100", Row("a", 1.0, "a"), summary(70.0)),
            ("H100", Row("b", 1.0, "b"), summary(94.5)),
            ("H100", Row("c", 1.0, "c"), summary(87.8)),
            ("B200", Row("d", 1.0, "d"), summary(150.0, 179.0))]
    assert [r.experiment for _, r, _ in validation_memory.memory_over(rows)] == ["b", "c"]
    text = "\n".join(validation_memory.memory_lines(rows))
    assert "2 of 4 published runs fit their GPUs' memory at meshsim's peak; **2 do not**" in text
    assert "| b | H100 | 94.5 | 80.0 | -14.5 |" in text
    assert text.index("| b |") < text.index("| c |")
    # Of those that fit, the one with the least room comes first.
    assert text.index("| a | H100 | 70.0 | 80.0 | +10.0 |") < text.index("| d |")


def test_no_row_over_says_so_in_the_headline():
    rows = [("H100", Row("a", 1.0, "a"), summary(70.0))]
    assert validation_memory.memory_headline(rows) == \
        "1 of 1 published runs fit their GPUs' memory at meshsim's peak"
    assert "Over their budget" not in "\n".join(validation_memory.memory_lines(rows))
