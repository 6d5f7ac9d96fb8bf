"""The software check of results/validation.md (scripts/validation_software.py): each row's
release, and the signed error per release and GPU kind."""
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import validation_software  # noqa: E402
from validation_data import DATASETS, Row  # noqa: E402


def test_release_of_reads_the_container_or_the_data_set():
    assert validation_software.release_of(
        Row("public-b200-bridge-llama3-8b-cs", 1.0, "25.11 LLAMA3_8B FP8-CS: 8 GPUs")) == \
        "Megatron-Bridge 25.11"
    assert validation_software.release_of(
        Row("x", 1.0, "Megatron-Bridge 26.04.01 GPT OSS 120B BF16: 64 GPUs")) == \
        "Megatron-Bridge 26.04.01"
    assert validation_software.release_of(Row("x", 1.0, "Bridge 26.06 LLAMA3.1_405B")) == \
        "Megatron-Bridge 26.06"
    assert validation_software.release_of(Row("x", 1.0, "NeMo 24.07 GPT3-5B: 64 GPUs")) == \
        "NeMo 24.07"
    assert validation_software.release_of(
        Row("public-h100-megatron-32b", 1.0, "32B: 384 GPUs")) == "Megatron-Core r0.8.0 (2024-07)"


def test_every_bundled_row_has_a_known_release():
    for ds in DATASETS.values():
        for row in ds.rows:
            assert validation_software.release_of(row) != "other", row


def test_rows_group_by_release_and_gpu_in_date_order():
    def summary(step_s):
        return {"step_time_s": step_s}
    rows = [("B", Row("a", 1.0, "26.08 M: 8 GPUs"), summary(0.9)),
            ("B", Row("b", 1.0, "26.08 M: 8 GPUs"), summary(1.3)),
            ("H", Row("public-h100-megatron-1.7b", 1.0, "1.7B"), summary(1.05)),
            ("B", Row("c", 1.0, "26.04.01 M: 8 GPUs"), summary(1.0))]
    text = "\n".join(validation_software.software_lines(rows))
    assert "| Megatron-Bridge 26.08 | B | 2 | +10.00% | 20.00% |" in text
    assert text.index("Megatron-Core r0.8.0") < text.index("26.04.01") < text.index("26.08")
