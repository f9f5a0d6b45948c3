"""``mfq.exact``: the exact N-object chain beside x*, x* + V/N and x* + V/N + A/N^2, against
values the code did not produce: the SIS birth-death means of Gast, Bortolussi and Tribastone
("Size expansions of mean field approximation", Performance Evaluation 2018), 0.5929041 at
N = 5 and 0.6055449 at N = 10, and the M/M/1/K product form of random routing (d = 1)."""

import math

import numpy as np
import pytest

import mfq


def test_sis_birth_death_means(root):
    """SIS (models/generic/sis.toml): E[X_N] = 0.5929041 (N = 5), 0.6055449 (N = 10); the
    refined terms are the closed forms V = -(sqrt 5 - 1)/10, A = (sqrt 5 - 3)/50."""
    m = mfq.Model.from_file(root / "models/generic/sis.toml")
    r = mfq.exact(m, servers=[5, 10])
    assert isinstance(r, mfq.Exact) and r.status == ["converged", "converged"] and r.stopped is None
    np.testing.assert_allclose(r.exact[:, 0], [0.5929041, 0.6055449], rtol=0, atol=5e-8)
    s5 = math.sqrt(5.0)
    assert r.order == 2
    assert abs(r.x[0] - (s5 - 1) / 2) < 1e-12
    assert abs(r.V[0] + (s5 - 1) / 10) < 1e-8 and abs(r.A[0] - (s5 - 3) / 50) < 1e-6
    # x*, x* + V/N, x* + V/N + A/N^2: each closer to the exact mean than the one before
    errs = [abs(r.x[0] - r.exact[:, 0]), abs(r.first[:, 0] - r.exact[:, 0]), abs(r.second[:, 0] - r.exact[:, 0])]
    assert np.all(errs[2] < errs[1]) and np.all(errs[1] < errs[0])
    np.testing.assert_allclose(r.second[:, 0], r.x[0] + r.V[0] / np.array([5, 10]) + r.A[0] / np.array([25, 100]))


def test_random_routing_is_the_mm1k_product_form():
    """d = 1: the N servers are independent M/M/1/K queues, so E[x_k^N] = (rho^k - rho^(K+1)) /
    (1 - rho^(K+1)) at every N, and V = A = 0."""
    lam, k = 0.6, 4
    r = mfq.Model(kind="jsq", lam=lam, d=1).exact(servers=3, buffer=k)
    want = np.array([(lam**j - lam ** (k + 1)) / (1 - lam ** (k + 1)) for j in range(1, k + 1)])
    np.testing.assert_allclose(r.exact[0], want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.x, want, rtol=0, atol=1e-10)
    assert np.all(np.abs(r.V) < 1e-9) and r.states == [math.comb(3 + k, k)]
    assert abs(r.mean_queue_length[0] - want.sum()) < 1e-12


def test_exact_refuses_with_the_field():
    """No buffer for a queueing model, a bad method, a size of 0: InvalidInput naming the field."""
    m = mfq.Model(kind="jsq", lam=0.6, d=2)
    with pytest.raises(mfq.InvalidInput) as e:
        m.exact(servers=5)
    assert e.value.field == "truncation.levels"
    with pytest.raises(mfq.InvalidInput) as e:
        m.exact(servers=5, buffer=3, method="dense")
    assert e.value.field == "method"
    with pytest.raises(mfq.InvalidInput) as e:
        m.exact(servers=[5, 0], buffer=3)
    assert e.value.field == "servers"


def test_time_limit_keeps_what_is_finished():
    """max_seconds far below the N = 20, buffer 6 solve (230,230 states): NotConverged with the
    partial result, N = 4 finished (E[x_1] = lambda (1 - P(loss)) exactly: every accepted job
    leaves)."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    with pytest.raises(mfq.NotConverged) as e:
        m.exact(servers=[4, 20], buffer=6, max_seconds=0.3)
    r = e.value.result
    assert r.stopped is not None and "N = 20" in r.stopped
    assert r.states[0] == 210 and r.status[0] == "converged"
    loss = r.report["exact"][0]["observables"]["loss_probability"]
    assert abs(r.exact[0, 0] - 0.9 * (1 - loss)) < 1e-12
    partial = m.exact(servers=[4, 20], buffer=6, max_seconds=0.3, strict=False)
    assert partial.stopped is not None and partial.exact.shape[0] >= 1
