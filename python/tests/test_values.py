"""Values the code did not produce: closed forms and values of the Rust reference tests
(tests/reference_values.rs, docs/references.md)."""

import math

import numpy as np
import pytest

import mfq


@pytest.mark.parametrize("lam", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("d", [2, 3])
def test_jsq_tail_closed_form(lam, d):
    """JSQ(d) (Mitzenmacher, IEEE TPDS 12(10), 2001, Theorem 3.6): x_k = lam^((d^k - 1)/(d - 1))."""
    fp = mfq.Model(kind="jsq", lam=lam, d=d).fixed_point()
    assert fp.converged and fp.residual < 1e-12
    exact = np.array([lam ** ((d ** k - 1) / (d - 1)) for k in range(1, fp.truncation + 1)])
    np.testing.assert_allclose(fp.tail, exact, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fp.x, exact, rtol=0, atol=1e-10)
    assert fp.mass_at_truncation < 1e-12


def test_jsq2_mean_response_time():
    """JSQ(2), lambda = 0.9: T = sum_{k>=1} lambda^(2^k - 2) = 2.614057... (Mitzenmacher 2001)."""
    lam = 0.9
    exact = sum(lam ** (2**k - 2) for k in range(1, 40))
    assert abs(exact - 2.614057) < 1e-6
    fp = mfq.Model(kind="jsq", lam=lam, d=2).fixed_point()
    assert abs(fp.mean_response_time - exact) < 1e-9
    assert abs(fp.prob_wait - lam**2) < 1e-9  # all d = 2 servers sampled busy: x_1^2 = lambda^2
    assert fp.spectral_abscissa is not None and fp.spectral_abscissa < 0


@pytest.mark.parametrize("lam", [0.3, 0.8])
def test_mm1_d1(lam):
    """d = 1 is M/M/1 (random routing): x_k = lam^k, L = lam/(1-lam), T = 1/(1-lam)."""
    fp = mfq.Model(kind="jsq", lam=lam, d=1).fixed_point()
    k = np.arange(1, fp.truncation + 1)
    np.testing.assert_allclose(fp.tail, lam**k, rtol=0, atol=1e-10)
    assert abs(fp.mean_queue_length - lam / (1 - lam)) < 1e-9
    assert abs(fp.mean_response_time - 1 / (1 - lam)) < 1e-9


def test_pod_li_exact_recursion():
    """Pod-LI, d = 2, lambda = 0.5, eps = 0.3: x = 0.5, 0.2, 0.068, 0.0213248 (exact rationals),
    T = 1.59721431 (tests/reference_values.rs, validation/pod_errors.py)."""
    fp = mfq.Model(kind="pod-li", lam=0.5, d=2, eps=0.3).fixed_point()
    np.testing.assert_allclose(fp.x[:4], [0.5, 0.2, 0.068, 0.0213248], rtol=0, atol=1e-9)
    assert abs(fp.mean_response_time - 1.59721431) < 1e-6


def test_pod_ld_from_the_bundled_file(root):
    """models/pod-ld-d2.toml (or the pod-ld file bundled): T = 2.90133 (tests/reference_values.rs)."""
    path = next(p for p in (root / "models").glob("pod*.toml") if 'kind = "pod-ld"' in p.read_text() and "lambda = 0.9\n" in p.read_text() and "g = 1" in p.read_text() and "d = 2" in p.read_text())
    fp = mfq.Model.from_file(path).fixed_point()
    assert abs(fp.mean_response_time - 2.90132715) < 1e-7
    np.testing.assert_allclose(fp.x[:3], [0.9, 0.7431192661, 0.5274539754], rtol=0, atol=1e-9)


def test_redundancy_d2():
    """Redundancy-d (identical copies, cancel-on-complete mean field), lambda = 0.9, d = 2:
    mean copies per server m = 3.337652, T = m / (lambda d) (tests/redundancy.rs)."""
    fp = mfq.Model(kind="redundancy", lam=0.9, d=2).fixed_point()
    assert abs(fp.mean_queue_length - 3.337652) < 1e-6
    assert abs(fp.mean_response_time - 3.337652 / 1.8) < 1e-6


def test_refined_jsq2_sum_v():
    """JSQ(2), lambda = 0.9, K = 20: sum V = 3.986427 (rmf_tool and validation/jsq.py;
    crates/mfq/src/model.rs)."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2, truncation={"levels": 20})
    r = m.refined()
    assert abs(r.sum_v - 3.986427) < 2e-6
    assert abs(float(r.V.sum()) - r.sum_v) < 1e-12
    est = r.estimate(100)
    np.testing.assert_allclose(est["x"], r.x + r.V / 100)
    assert r.warnings == []


def test_refined_warns_at_a_degenerate_fixed_point():
    """Stubborn-agent majority rule, gamma0 = gamma1 = 1/4: a triple root at x = 1/2
    (docs/models/opinion.md), where the refined terms do not exist: the first warning says so."""
    with pytest.warns(RuntimeWarning, match="the fixed point is degenerate"):
        r = mfq.Model(kind="opinion-stubborn", gamma0=0.25, gamma1=0.25).refined()
    assert r.warnings and r.warnings[0].startswith("the fixed point is degenerate")


def test_refined_order_two_sis_against_closed_forms_and_the_exact_chain(root):
    """The SIS model of Gast, Bortolussi and Tribastone (Perf. Eval. 2019; models/generic/sis.toml):
    x* = (sqrt 5 - 1)/2, V = -(sqrt 5 - 1)/10, A = (sqrt 5 - 3)/50 (docs/refined.md), and the
    exact means of the N-object chain published in the paper (N = 10, 20, 50): order 2 is closer
    than order 1 at each N, and the estimates the core gives equal those of ``estimate``."""
    m = mfq.Model.from_file(root / "models" / "generic" / "sis.toml")
    s5 = math.sqrt(5.0)
    r = m.refined(order=2, servers=[10, 20, 50])
    assert r.order == 2 and r.A is not None
    assert abs(r.x[0] - (s5 - 1) / 2) < 1e-12
    assert abs(r.V[0] + (s5 - 1) / 10) < 1e-10
    assert abs(r.A[0] - (s5 - 3) / 50) < 1e-8 and abs(r.sum_a - r.A[0]) < 1e-15
    one = m.refined(order=1)
    assert one.A is None and one.sum_a is None
    for n, published in [(10, 0.6055449), (20, 0.6118184), (50, 0.6155559)]:
        e2 = r.estimate(n)["x"][0]
        e1 = one.estimate(n)["x"][0]
        # order 1 errs by 1.3e-4 at N = 10, order 2 by 2.4e-5 (an O(1/N^3) remainder)
        assert abs(e2 - published) < 0.25 * abs(e1 - published)
    for e in r.estimates:
        mine = r.estimate(e["servers"])
        np.testing.assert_allclose(mine["x"], e["x"], rtol=0, atol=1e-15)
        np.testing.assert_allclose(mine["tail"], e["tail"], rtol=0, atol=1e-15)
        assert mine["extras"].keys() == e["extras"].keys()


def test_drift_vanishes_at_the_closed_form_and_jacobian_matches_differences():
    """The drift at the closed-form tail of JSQ(2) is ~0; the Jacobian agrees with central
    differences of the drift computed here."""
    lam = 0.7
    m = mfq.Model(kind="jsq", lam=lam, d=2)
    x = np.array([lam ** (2**k - 1) for k in range(1, 9)])
    assert np.max(np.abs(m.drift(x))) < 1e-12
    y = np.array([0.6, 0.35, 0.2, 0.05])
    j = m.jacobian(y)
    h = 1e-6
    fd = np.column_stack([(m.drift(y + h * e) - m.drift(y - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(j, fd, atol=1e-8)


def test_transient_reaches_the_fixed_point():
    """From empty, the JSQ(2) transient reaches the closed-form fixed point."""
    lam = 0.8
    m = mfq.Model(kind="jsq", lam=lam, d=2, truncation={"levels": 12})
    traj = m.solve(200.0, t_eval=[0.0, 1.0, 50.0, 200.0])
    exact = np.array([lam ** (2**k - 1) for k in range(1, 13)])
    assert np.all(traj.x[0] == 0)
    np.testing.assert_allclose(traj.x[-1], exact, atol=1e-7)


def test_simulation_brackets_the_refined_mean_field():
    """JSQ(2), lambda = 0.9, N = 50: the simulated mean queue length is within its interval
    (widened by the O(1/N^2) remainder) of the refined mean field L + c/N."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    sim = m.simulate(50, time=2000.0, warmup=200.0, replications=4, seed=3)
    r = m.refined()
    est = r.estimate(50)["mean_queue_length"]
    assert abs(sim.mean_queue_length.mean - est) < 3 * sim.mean_queue_length.half_width + 0.01
    assert abs(sim.throughput.mean - 0.9) < 3 * sim.throughput.half_width + 1e-3


def test_sweep_matches_single_solves():
    m = mfq.Model(kind="jsq", lam=0.5, d=2)
    s = mfq.sweep(m, lam=[0.5, 0.9, 1.2], d=[1, 2])
    assert list(s["status"]) == ["solved", "solved", "unstable"] * 2
    for lam, d, t in zip(s["lambda"], s["d"], s["mean_response_time"]):
        if lam < 1:
            exact = 1 / (1 - lam) if d == 1 else sum(lam ** (2**k - 2) for k in range(1, 40))
            assert abs(t - exact) < 1e-9
        else:
            assert math.isnan(t)


def test_generic_simulation_leaves_out_what_it_does_not_observe(root):
    """The population process of a generic model observes its state entries only: the
    throughput, loss, P(wait) and response time are None (they were Estimates of NaN), and so
    is the mean queue length of a state that is not one tail family (SIS: its entry X is in
    extras). Every estimate given is a number."""
    for name, tail_form in (("jsq2.toml", True), ("sis.toml", False)):
        m = mfq.Model.from_file(root / "models" / "generic" / name)
        sim = m.simulate(100, time=200.0, warmup=20.0, replications=2, batches=10, seed=3)
        assert sim.status == "completed"
        for field in ("mean_response_time", "throughput", "loss_probability", "prob_wait"):
            assert getattr(sim, field) is None, (name, field, getattr(sim, field))
        assert (sim.mean_queue_length is not None) == tail_form, name
        given = [e for e in (sim.mean_queue_length, *sim.extras.values()) if e is not None]
        assert given and all(math.isfinite(e.mean) and math.isfinite(e.half_width) for e in given), (name, given)
        assert not np.isnan(sim.tail).any() and not np.isnan(sim.tail_half_width).any()
        assert (sim.tail.size > 0) == tail_form
    assert mfq.Model.from_file(root / "models" / "generic" / "sis.toml").simulate(100, time=200.0, warmup=20.0).extras["X"].n == 100
