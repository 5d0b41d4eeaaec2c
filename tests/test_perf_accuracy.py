"""The accuracy figures, recomputed by hand on small inputs."""

import math

import pytest

from hloidx.perf.accuracy import AccuracyRow, accuracy, average_ranks, spearman


def test_within_2x_is_a_share_of_measured_kernel_time():
    rows = [
        (10.0, 10.0, False),  # ratio 1: in
        (30.0, 10.0, False),  # ratio 3: out
        (5.0, 10.0, False),  # ratio 0.5: in (the bound counts)
        (100.0, 40.0, False),  # ratio 2.5: out
        (1.0, 1000.0, True),  # a collective: kept apart
    ]
    # measured kernel time 10 + 10 + 10 + 40 = 70, within 2x: 10 + 10 = 20
    assert accuracy(rows)["within_2x"] == pytest.approx(20 / 70)
    assert accuracy(rows)["kernels"] == 4
    assert accuracy(rows)["collectives"] == {"count": 1, "within_2x": 0.0}


def test_launches_weight_the_share():
    rows = [AccuracyRow(10.0, 10.0, launches=3), AccuracyRow(50.0, 10.0)]
    # 30 ns of 40 ns measured per step is within 2x
    assert accuracy(rows)["within_2x"] == pytest.approx(0.75)
    # the same as tuples
    assert accuracy([(10.0, 10.0, False, 3), (50.0, 10.0, False)])["within_2x"] == 0.75


def test_a_range_holding_the_measurement_counts_as_within():
    rows = [
        AccuracyRow(1.0, 100.0, range_ns=(1.0, 500.0)),  # point off 100x, range holds it
        AccuracyRow(1.0, 100.0, range_ns=(1.0, 20.0)),  # range misses: point off, out
        AccuracyRow(60.0, 100.0, range_ns=(1.0, 20.0)),  # range misses, point within 2x
    ]
    assert accuracy(rows)["within_2x"] == pytest.approx(200 / 300)
    assert accuracy([(1.0, 100.0, False, 1, (1.0, 500.0))])["within_2x"] == 1.0


def test_median_abs_log2_by_hand():
    rows = [(8.0, 1.0, False), (1.0, 4.0, False), (3.0, 3.0, False), (2.0, 1.0, False)]
    # |log2| = 3, 2, 0, 1 -> sorted 0 1 2 3 -> median (1 + 2) / 2
    assert accuracy(rows)["median_abs_log2"] == pytest.approx(1.5)
    assert accuracy(rows[:3])["median_abs_log2"] == pytest.approx(2.0)


def test_spearman_without_ties_by_the_textbook_formula():
    est = [1.0, 2.0, 3.0, 4.0, 5.0]
    meas = [2.0, 1.0, 4.0, 3.0, 5.0]
    # ranks differ by d = -1, 1, -1, 1, 0: rho = 1 - 6 * sum(d^2) / (n (n^2 - 1))
    expected = 1 - 6 * 4 / (5 * 24)
    assert spearman(est, meas) == pytest.approx(expected)
    rows = [(e, m, False) for e, m in zip(est, meas, strict=True)]
    assert accuracy(rows)["spearman"] == pytest.approx(0.8)


def test_spearman_with_ties_uses_average_ranks():
    assert average_ranks([10.0, 20.0, 20.0, 30.0]) == [1.0, 2.5, 2.5, 4.0]
    est = [10.0, 20.0, 20.0, 30.0]
    meas = [1.0, 2.0, 3.0, 4.0]
    # ranks x = 1, 2.5, 2.5, 4 (mean 2.5), y = 1, 2, 3, 4 (mean 2.5)
    # sum dx*dy = 2.25 + 0 + 0 + 2.25 = 4.5; sum dx^2 = 4.5; sum dy^2 = 5
    assert spearman(est, meas) == pytest.approx(4.5 / math.sqrt(4.5 * 5))


def test_unestimated_kernels_miss_and_are_left_out_of_the_ranks():
    rows = [(None, 10.0, False), (10.0, 10.0, False), (20.0, 40.0, False), (1.0, 5.0, False)]
    got = accuracy(rows)
    assert got["within_2x"] == pytest.approx(50 / 65)
    assert got["unestimated"] == 1
    # |log2| = 0, 1 and log2(5) = 2.32: the median is 1
    assert got["median_abs_log2"] == pytest.approx(1.0)
    # estimates 10, 20, 1 rank 2, 3, 1; measurements 10, 40, 5 rank 2, 3, 1
    assert got["spearman"] == pytest.approx(1.0)


def test_an_estimate_of_zero_is_infinitely_off_not_unestimated():
    rows = [(0.0, 5.0, False), (10.0, 10.0, False), (20.0, 40.0, False)]
    got = accuracy(rows)
    assert got["unestimated"] == 0
    assert got["within_2x"] == pytest.approx(50 / 55)
    assert got["median_abs_log2"] == pytest.approx(1.0)  # 0, 1, inf
    assert accuracy(rows[:1] + rows[2:])["median_abs_log2"] == math.inf  # (1 + inf) / 2
    assert got["spearman"] == pytest.approx(1.0)  # 0 < 10 < 20 as 5 < 10 < 40


def test_nothing_measured_gives_no_figures():
    got = accuracy([(1.0, 1.0, True)])
    assert got["within_2x"] is None
    assert got["spearman"] is None
    assert got["median_abs_log2"] is None
