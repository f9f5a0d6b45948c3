"""``mfq.sweep`` over names, tables and more than two parameters (docs/python.md), checked
against separate fixed points, the JSQ(d) closed form and a published value."""

import math

import numpy as np
import pytest

import mfq


def jsq_response_time(lam: float, d: int) -> float:
    """JSQ(d) mean response time from x_k = lambda^((d^k - 1)/(d - 1)) (Mitzenmacher, IEEE TPDS
    12(10), 2001; Vvedenskaya, Dobrushin, Karpelevich, 1996), by Little's law."""
    return sum(lam ** ((d**k - 1) / (d - 1)) for k in range(1, 40)) / lam


def test_a_discipline_sweep_equals_single_fixed_points():
    m = mfq.Model(kind="redundancy", lam=0.5, d=2, discipline="ps", approximation="pair")
    m = m.with_(**{"truncation.levels": 8, "truncation.tol": 1e-3})
    s = mfq.sweep(m, discipline=["ps", "fcfs"], lam=[0.5, 0.6])
    # the numeric axis is the x axis, the names give the curves
    assert list(s["discipline"]) == ["ps", "ps", "fcfs", "fcfs"] and s["discipline"].dtype.kind == "U"
    assert list(s["lambda"]) == [0.5, 0.6, 0.5, 0.6]
    for lam, disc, q in zip(s["lambda"], s["discipline"], s["mean_queue_length"]):
        alone = m.with_(lam=float(lam), discipline=str(disc)).fixed_point().mean_queue_length
        assert abs(q - alone) < 1e-9 * alone


def test_a_job_size_sweep_over_tables_and_a_third_axis():
    m = mfq.Model(kind="jsq-ph", lam=0.9, d=2, job_size={"law": "h2", "scv": 9.0, "f": 0.5}).with_(**{"truncation.tol": 1e-12})
    laws = [{"law": "exponential"}, {"law": "h2", "scv": 9.0, "f": 0.5}]
    s = mfq.sweep(m, lam=[0.5, 0.9], job_size=laws, d=[2, 3])
    assert len(s["status"]) == 8 and set(s["d"]) == {2.0, 3.0}
    for lam, law, d, t in zip(s["lambda"], s["job_size"], s["d"], s["mean_response_time"]):
        if "exponential" in law:
            assert abs(t - jsq_response_time(lam, int(d))) < 1e-9 * t
        elif lam == 0.9 and d == 2:
            assert abs(t - 6.334997) < 2e-6  # models/sq2-h2.toml (H2 of mean 1, SCV 9, f = 1/2)
    assert not any(math.isnan(t) for t in s["mean_response_time"])


def test_a_name_the_key_does_not_take_is_refused_with_the_allowed_values():
    m = mfq.Model(kind="redundancy", lam=0.5, d=2, discipline="ps", approximation="pair")
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=[0.5], discipline=["ps", "fifo"])
    assert "fifo" in str(e.value) and "`fcfs`" in str(e.value)
    with pytest.raises(mfq.InvalidInput):
        mfq.sweep(m, discipline="ps")
    assert np.asarray(mfq.sweep(mfq.Model(kind="jsq", lam=0.5, d=2), lam=[0.5])["lambda"]).dtype == np.float64
