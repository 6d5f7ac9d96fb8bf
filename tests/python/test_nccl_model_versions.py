"""scripts/nccl_model_versions.py (NCCL 2.12.12's and 2.19.3's tuner model for the two A100
two-node curves of results/nccl.md) against figures derived by hand from NCCL's source."""
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import nccl_model_versions as nmv  # noqa: E402

MIB = 1 << 20


def test_oci_2_19_3_tree_ll128_at_128_mib():
    # tuning.cc@v2.19.3-1: tree LL128 latency 14 + 2 (7 x 1.25 + 1 x 8.5) = 48.5 us; busbw
    # min(0.92 x 16 x 15, 16 x 23.6) x 120/128 = 207 GB/s, algbw 103.5; factor 1.0 at 2^21.
    v, g = nmv.VERSIONS["2.19.3"], nmv.GRAPHS["oci"]
    assert nmv.estimate_us(v, g, nmv.TREE, nmv.LL128, 128 * MIB) == pytest.approx(
        48.5 + 128 * MIB / 1000 / 103.5)


def test_oci_2_19_3_ring_simple_pays_amd_overhead_and_plateau():
    # Ring Simple: (8.4 + 26 x max(3.4, 3 x 2.0) + 4 x 14) x 1.4; busbw 16 x 12 x 16/30.
    v, g = nmv.VERSIONS["2.19.3"], nmv.GRAPHS["oci"]
    lat = (8.4 + 26 * 6.0 + 4 * 14.0) * 1.4
    assert nmv.estimate_us(v, g, nmv.RING, nmv.SIMPLE, 128 * MIB) == pytest.approx(
        lat + 128 * MIB / 1000 / (192 * 16 / 30))


def test_oci_2_19_3_runs_the_tree_and_leaves_ll128_at_1_gib():
    picks = {k: nmv.choose("oci", 1 << k)[:2] for k in (16, 18, 28, 29, 30, 32)}
    assert picks[16] == (nmv.TREE, nmv.LL)
    assert picks[18] == picks[28] == picks[29] == (nmv.TREE, nmv.LL128)
    assert picks[30] == picks[32] == (nmv.TREE, nmv.SIMPLE)


def test_gcm_2_12_12_ring_ll128_to_128_mib_then_simple():
    # tuning.cc@v2.12.12-1: LL128 ring 10 + 26 x 1.9 + 4 x 4 = 75.4 us at min(0.92 x 192,
    # 8 x 20) = 160 GB/s busbw; Simple ring (8.4 + 26 x 3.4 + 4 x 28) x 1.9 at 192.
    v, g = nmv.VERSIONS["2.12.12"], nmv.GRAPHS["gcm"]
    assert nmv.estimate_us(v, g, nmv.RING, nmv.LL128, 32 * MIB) == pytest.approx(
        75.4 + 32 * MIB / 1000 / (160 * 16 / 30))
    assert nmv.choose("gcm", 32 * MIB)[:2] == (nmv.RING, nmv.LL128)
    assert nmv.choose("gcm", 128 * MIB)[:2] == (nmv.RING, nmv.LL128)
    assert nmv.choose("gcm", 256 * MIB)[:2] == (nmv.RING, nmv.SIMPLE)
