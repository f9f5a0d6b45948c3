"""The package does what the CLI does with the same input (`mfq simulate`, `mfq solve --x0`,
`mfq sweep`, `mfq refined --max-seconds`): simulations of unstable models are refused, states
outside the state space are not clamped, bad options raise `InvalidInput` with their value,
invalid sweep points carry their error, and the refined terms stop at `max_seconds`. (Each
test failed before its fix.)"""

import warnings

import numpy as np
import pytest

import mfq


# ---- 1. simulate refuses unstable models, as `mfq simulate` (exit code 3) -----------------------


def _unstable_models(root):
    return [
        mfq.Model(kind="jsq", lam=1.2, d=2),
        mfq.Model(kind="jsq", lam=1.0, d=2),
        mfq.Model(kind="pod-li", lam=0.84, d=2, eps=0.6),  # lambda >= 1/(eps d) = 0.8333
        mfq.Model.from_file(root / "models" / "hetero-sa-jsq-caseA.toml", lam=1.5),  # capacity 1
    ]


def test_simulate_refuses_unstable_models_with_the_reason_of_the_fixed_point(root):
    """They simulated (JSQ(2) at lambda = 1.2, N = 10: status 'completed', L ~ 106) while the CLI,
    fixed_point, check and refined refuse them; the reason is the front door's, the same text."""
    for m in _unstable_models(root):
        with pytest.raises(mfq.Unstable) as e:
            m.simulate(servers=10, time=10.0, warmup=1.0, replications=1)
        with pytest.raises(mfq.Unstable) as fp:
            m.fixed_point()
        assert e.value.reason and e.value.reason == fp.value.reason, (e.value.reason, fp.value.reason)
        with pytest.raises(mfq.Unstable):
            m.check(starts=2)
        with pytest.raises(mfq.Unstable):
            m.refined()


def test_a_finite_buffer_simulates_at_any_load_as_the_cli_does():
    """The CLI has no flag to simulate an unstable system; a finite buffer (a loss system) it
    simulates at any load (`--set truncation.buffer=true`), and so does `buffer=K`."""
    m = mfq.Model(kind="jsq", lam=1.2, d=2)
    sim = m.simulate(servers=10, time=20.0, warmup=5.0, replications=2, buffer=5)
    assert sim.status == "completed" and sim.mean_queue_length.mean <= 5 and sim.loss_probability.mean > 0
    buffered = m.with_(**{"truncation.levels": 5, "truncation.buffer": True})
    assert buffered.simulate(servers=10, time=20.0, warmup=5.0, replications=2).status == "completed"
    # stable models simulate as before
    assert mfq.Model(kind="jsq", lam=0.9, d=2).simulate(servers=10, time=20.0, warmup=5.0, replications=2).status == "completed"


# ---- 2. drift and jacobian take states of the model only, as solve's x0 ----------------------------


def test_drift_and_jacobian_refuse_states_outside_the_state_space_instead_of_clamping():
    """drift([5, 5]) equalled drift([1, 1]) and drift([0, -0.5]) drift([0, 0]) (the rates clamp
    to [0, 1]); a NaN gave NaNs."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for job in (m.drift, m.jacobian):
        for x, constraint in (([5.0, 5.0], "x_1 <= 1"), ([0.0, -0.5], "0 <= x_2"), ([0.5, 0.9], "x_2 <= x_1")):
            with pytest.raises(mfq.InvalidInput) as e:
                job(x)
            assert e.value.field == "x" and constraint in str(e.value) and constraint in e.value.value, str(e.value)
        for bad in (np.nan, np.inf, -np.inf):
            with pytest.raises(mfq.InvalidInput) as e:
                job([0.5, bad])
            assert e.value.field == "x" and e.value.value.startswith("entry 2 = ") and "x[1]" in str(e.value), str(e.value)
    # the boundary is in the state space: evaluated as given
    np.testing.assert_array_equal(m.drift([1.0, 1.0]), [0.0, -1.0])
    np.testing.assert_array_equal(m.drift([0.0, 0.0]), [0.9, 0.0])


def test_fixed_point_start_is_checked_as_solve_checks_it():
    """fixed_point(x0=[0.5, 0.9]) (breaks x_2 <= x_1) was accepted, solve(x0=...) refused it; an
    x0 the solver cannot read (another size at a fixed truncation) was dropped without a word."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    with pytest.raises(mfq.InvalidInput) as fp:
        m.fixed_point(x0=[0.5, 0.9])
    with pytest.raises(mfq.InvalidInput) as solve:
        m.solve(10.0, x0=[0.5, 0.9])
    assert fp.value.field == solve.value.field == "x0" and str(fp.value) == str(solve.value)
    with pytest.raises(mfq.InvalidInput) as e:
        m.fixed_point(x0=[0.5, float("nan")])
    assert e.value.field == "x0" and "entry 2" in str(e.value)
    fixed = m.with_(**{"truncation.levels": 12})
    with pytest.raises(mfq.InvalidInput) as e:
        fixed.fixed_point(x0=[0.9, 0.7])
    assert e.value.field == "x0" and e.value.value == "2 entries" and "12" in e.value.allowed
    # feasible starts of any length are read (the tail sets the first level), as before
    assert m.fixed_point(x0=[0.9, 0.729]).converged and m.fixed_point(x0=m.fixed_point().x).converged
    assert fixed.fixed_point(x0=np.full(12, 0.5) ** np.arange(1, 13)).converged


def test_central_differences_of_the_drift_agree_with_the_jacobian_near_the_fixed_point():
    """At the JSQ(2) fixed point (x_9 ~ 1e-24) a step of 1e-6 leaves the state space in the last
    entries: those differences were of the clamped drift (-0.5 against the Jacobian's -1); now the
    call raises, and every difference computed agrees with jacobian()."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    x = m.fixed_point().x
    jac, h, agreed = m.jacobian(x), 1e-6, 0
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        try:
            column = (m.drift(x + e) - m.drift(x - e)) / (2 * h)
        except mfq.InvalidInput as err:
            assert err.field == "x"
            continue
        np.testing.assert_allclose(column, jac[:, j], rtol=0, atol=1e-8)
        agreed += 1
    assert agreed >= x.size - 2
    # a finite buffer's fixed point lies inside: every column agrees
    b = mfq.Model(kind="jsq", lam=0.9, d=2, truncation={"levels": 4, "buffer": True})
    y = b.fixed_point().x
    fd = np.column_stack([(b.drift(y + h * e) - b.drift(y - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(fd, b.jacobian(y), rtol=0, atol=1e-8)


# ---- 3. bad options raise InvalidInput with their fields ------------------------------------------


def test_integer_options_out_of_the_machine_range_raise_invalid_input():
    """max_iter=-1, starts=-1 and seed=2**70 raised OverflowError from the compiled module."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    cases = [
        (lambda: m.fixed_point(max_iter=-1), "max_iter", "-1"),
        (lambda: m.check(starts=-1), "starts", "-1"),
        (lambda: m.check(seed=-1), "seed", "-1"),
        (lambda: m.simulate(servers=10, time=10.0, seed=2**70), "seed", str(2**70)),
        (lambda: m.simulate(servers=10, time=10.0, buffer=2**40), "buffer", str(2**40)),
        (lambda: m.drift([0.5, 0.2], levels=-2), "levels", "-2"),
        (lambda: m.solve(1.0, levels=-2), "levels", "-2"),
        (lambda: m.exact(5, max_states=-1), "max_states", "-1"),
        (lambda: m.fixed_point(max_iter=2.0), "max_iter", "2.0"),
        (lambda: m.fixed_point(tol="1e-9"), "tol", "'1e-9'"),
        (lambda: m.solve(1.0, rtol="x"), "rtol", "'x'"),
    ]
    for job, field, value in cases:
        with pytest.raises(mfq.InvalidInput) as e:
            job()
        assert (e.value.field, e.value.value) == (field, value), str(e.value)


def test_the_allowed_range_of_a_count_is_the_cores():
    """simulate(servers=10.0) said 'an integer >= 0' while the least is 1: a value the compiled
    module cannot take is refused with the core's own words for the option."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for option in ("servers", "replications", "batches"):
        with pytest.raises(mfq.InvalidInput) as core:  # 0 reaches the core's check
            m.simulate(**{"servers": 10, "time": 10.0, option: 0})
        for bad in (-1, 10.0, "10", True):
            with pytest.raises(mfq.InvalidInput) as e:
                m.simulate(**{"servers": 10, "time": 10.0, option: bad})
            assert e.value.field == option and e.value.allowed == core.value.allowed, (e.value.allowed, core.value.allowed)
    with pytest.raises(mfq.InvalidInput) as e:
        m.simulate(servers=10.0)
    assert e.value.allowed.startswith("an integer in [1, ")
    with pytest.raises(mfq.InvalidInput) as core:
        m.fixed_point(max_iter=0)
    with pytest.raises(mfq.InvalidInput) as e:
        m.fixed_point(max_iter=-1)
    assert e.value.allowed == core.value.allowed
    with pytest.raises(mfq.InvalidInput) as core:
        m.check(starts=0)
    with pytest.raises(mfq.InvalidInput) as e:
        m.check(starts=-1)
    assert e.value.allowed.startswith(core.value.allowed)


def test_state_arguments_of_another_shape_raise_invalid_input():
    """fixed_point(x0=np.zeros((2, 2))) and drift(np.zeros((3, 3))) raised a bare TypeError."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for job, field in ((lambda x: m.fixed_point(x0=x), "x0"), (m.drift, "x"), (m.jacobian, "x"), (lambda x: m.solve(1.0, x0=x), "x0")):
        for bad, value in ((np.zeros((2, 2)), "an array of shape (2, 2)"), (0.5, "an array of shape ()")):
            with pytest.raises(mfq.InvalidInput) as e:
                job(bad)
            assert (e.value.field, e.value.value) == (field, value), str(e.value)
        with pytest.raises(mfq.InvalidInput) as e:
            job(["0.5", "0.2"])
        assert e.value.field == field


def test_max_seconds_as_text_is_refused():
    """fixed_point(max_seconds="1") was read as 1 s, though the docs say anything but None or a
    finite number raises."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for job in (m.fixed_point, m.check, m.refined, lambda **k: m.simulate(10, time=10.0, **k), lambda **k: mfq.sweep(m, lam=[0.5], **k)):
        with pytest.raises(mfq.InvalidInput) as e:
            job(max_seconds="1")
        assert (e.value.field, e.value.value) == ("max_seconds", "'1'")
    assert m.fixed_point(max_seconds=np.float64(5.0)).converged and m.fixed_point(max_seconds=5).converged


def test_type_errors_of_parameters_carry_the_value_given():
    """InvalidInput.value was None for a parameter of the wrong type."""
    for params, field, value in (
        ({"lam": "0.5", "d": 2}, "model.lambda", '"0.5"'),
        ({"lam": 0.5, "d": 2.0}, "model.d", "2.0"),
        ({"lam": 0.5, "d": [2]}, "model.d", "[2]"),
    ):
        with pytest.raises(mfq.InvalidInput) as e:
            mfq.Model(kind="jsq", **params)
        assert (e.value.field, e.value.value) == (field, value), str(e.value)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="jsq", lam=0.5, d=2).with_(d=2.0)
    assert (e.value.field, e.value.value) == ("model.d", "2.0"), str(e.value)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model.from_toml('[model]\nkind = "jsq"\nlambda = 0.5\nd = "two"\n')
    assert (e.value.field, e.value.value) == ("model.d", '"two"')
    # no value to give: a missing key
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="sa-jsq", lam=0.5)
    assert e.value.value is None


def test_a_key_given_under_two_names_is_named():
    """lam= and lambda= together gave a TOML duplicate-key error with field None (with_: the
    last one won without a word)."""
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="jsq", lam=0.5, d=2, **{"lambda": 0.6})
    assert e.value.field == "model.lambda" and "lam" in str(e.value) and "0.6" in e.value.value
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="jsq", lam=0.5, d=2).with_(lam=0.6, lambda_=0.7)
    assert e.value.field == "lambda"
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model({"model": {"kind": "jsq", "lam": 0.5, "lambda": 0.6, "d": 2}})
    assert e.value.field == "model.lambda"
    # a keyword replaces the dict's key whichever name either uses
    assert mfq.Model({"kind": "jsq", "lambda": 0.5, "d": 2}, lam=0.6) == mfq.Model(kind="jsq", lam=0.6, d=2)


def test_system_sizes_must_be_integers():
    """refined(servers=[10.5]) and Refined.estimate(1.5) evaluated the expansion at N = 10.5 (and
    exact truncated 10.5 to 10); integral floats are sizes."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    r = m.refined(servers=np.array([10.0, 20.0]))
    assert [e["servers"] for e in r.estimates] == [10.0, 20.0]
    for job in (lambda: m.refined(servers=[10.5]), lambda: r.estimate(1.5), lambda: r.estimate(0), lambda: r.estimate(True),
                lambda: m.exact(servers=[5.5], buffer=4)):  # fmt: skip
        with pytest.raises(mfq.InvalidInput) as e:
            job()
        assert e.value.field == "servers", str(e.value)
    assert r.estimate(np.int64(10))["mean_queue_length"] == pytest.approx(r.estimates[0]["mean_queue_length"], rel=1e-13)


# ---- 4. invalid sweep points ----------------------------------------------------------------------


def test_invalid_sweep_points_are_reported_with_their_error(root):
    """A point with invalid parameters had status 'invalid', a status docs/python.md did not list,
    and nothing said so. The grid keeps going (the CLI writes the other points, then exits 2): the
    error is in the point's reason, and a RuntimeWarning says it."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    with pytest.warns(RuntimeWarning, match=r"1 of 3 sweep points have invalid parameters.*d = 0.*model\.d") as w:
        s = mfq.sweep(m, d=[0, 2, 3])
    assert len(w) == 1
    assert list(s["status"]) == ["invalid", "solved", "solved"]
    assert "model.d" in s["reason"][0] and s["reason"][1] == ""
    assert np.isnan(s["mean_response_time"][0]) and s["iterations"][0] == -1 and s["tails"][0].size == 0
    with pytest.warns(RuntimeWarning, match="lambda = nan"):
        s = mfq.sweep(m, lam=[float("nan"), 0.5])
    assert list(s["status"]) == ["invalid", "solved"] and "lambda" in s["reason"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(mfq.sweep(m, lam=[0.5, 1.2])["status"]) == ["solved", "unstable"]  # no warning
        with pytest.raises(RuntimeWarning):
            mfq.sweep(m, d=[0, 2])
    # docs/python.md lists every status a point can have (mfq::sweep::PointStatus)
    text = (root / "docs" / "python.md").read_text()
    section = text[text.index("**`SweepResult`**") : text.index("Every result compares equal")]
    for status in ("solved", "unstable", "failed", "invalid", "stable", "stability-unknown"):
        assert f'`"{status}"`' in section, status


# ---- 5. the refined terms stop at max_seconds, as `mfq refined --max-seconds` (exit code 4) -------


def test_refined_terms_stop_at_max_seconds():
    # JSQ(1) at lambda = 0.97: 904 levels, whose dense Lyapunov equation takes a few seconds.
    # (The worker finishes it after the call has returned, its result dropped: a short case, so
    # that it does not run on into the CPU measurements of test_interrupt.py.)
    import time

    started = time.monotonic()
    with pytest.raises(mfq.NotConverged) as e:
        mfq.Model(kind="jsq", lam=0.97, d=1).refined(max_seconds=0.3)
    assert e.value.status == "stopped"
    assert "the refined terms of order 1" in str(e.value) and "stopped at the wall-clock limit" in str(e.value)
    assert time.monotonic() - started < 3.0


def test_a_long_tail_keeps_its_refined_mean_queue_length():
    # independent M/M/1 queues, 677 levels: L = rho / (1 - rho) = 24 at every N (V = 0)
    r = mfq.Model(kind="jsq", lam=0.96, d=1).refined(servers=[10])
    assert r.warnings == []
    assert r.estimates[0]["mean_queue_length"] == pytest.approx(24.0, abs=1e-6)
    assert r.estimate(100)["mean_response_time"] == pytest.approx(25.0, abs=1e-6)


# ---- 6. a sweep stopped by max_seconds keeps its finished points, as `mfq sweep` (exit code 4) ----


def test_a_sweep_stopped_by_max_seconds_keeps_its_finished_points():
    m = mfq.Model(kind="jsq", lam=0.5, d=2)
    lam = np.linspace(0.1, 0.99, 100_000)  # about 2.5 seconds of fixed points (the cap of an axis)
    with pytest.raises(mfq.NotConverged) as e:
        mfq.sweep(m, lam=lam, max_seconds=0.2)
    assert e.value.status == "stopped" and "of 100000 points finished" in str(e.value)
    # said once: it read "sweep stopped at stopped at ...: n of m points finished: n of m points finished"
    assert str(e.value).startswith("sweep stopped at the wall-clock limit --max-seconds 0.2: ")
    assert str(e.value).count("points finished") == 1 and "stopped at stopped" not in str(e.value)
    part = e.value.result
    n = len(part["status"])
    assert 0 < n < 100_000 and all(s == "solved" for s in part["status"])
    # each finished point is the fixed point of its lambda: JSQ(2), x_1 = lambda, L = sum lambda^(2^k - 1)
    for i in (0, n - 1):
        lm = part["lambda"][i]
        want = sum(lm ** (2**k - 1) for k in range(1, 60))
        assert part["mean_queue_length"][i] == pytest.approx(want, rel=1e-9)
    with pytest.warns(RuntimeWarning, match="points finished"):
        kept = mfq.sweep(m, lam=lam[:50_000], max_seconds=0.1, strict=False)
    assert 0 < len(kept["status"]) < 50_000


def test_a_sweep_axis_beyond_the_cap_is_refused_at_once():
    """10**7 values ran for 9.7 s with max_seconds=0.5; `mfq sweep` caps a range at 100000 points."""
    import time

    m = mfq.Model(kind="jsq", lam=0.5, d=2)
    start = time.perf_counter()
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=np.linspace(0.1, 0.9, 10**7), max_seconds=0.5)
    assert time.perf_counter() - start < 0.5
    assert e.value.field == "lambda" and str(e.value) == "lambda: 10000000 values; allowed: at most 100000 values per axis"


def test_a_nan_in_a_sweep_axis_is_said_as_the_cli_says_it():
    """The reason read `after --set lambda=NaN: model.lambda: invalid type: string "NaN", expected f64`."""
    with pytest.warns(RuntimeWarning, match="1 of 2 sweep points"):
        s = mfq.sweep(mfq.Model(kind="jsq", lam=0.5, d=2), lam=[0.5, float("nan")])
    assert list(s["status"]) == ["solved", "invalid"]
    assert s["reason"][1] == "lambda = NaN is not allowed: model.lambda takes a finite number"
    # the other point is JSQ(2)'s closed form T = sum_k 0.5^(2^k - 2) (Mitzenmacher 2001)
    assert s["mean_response_time"][0] == pytest.approx(sum(0.5 ** (2**k - 2) for k in range(1, 20)), rel=1e-9)


# ---- 7. a generic model's simulation needs a converged fixed point, as `mfq simulate` (code 4) ---


def test_a_generic_simulation_from_an_unconverged_fixed_point_is_refused(root):
    # M/M/1 at lambda = 1.2: no stability condition is known for a generic model, and the mass
    # piles up at the truncation level; the population process started there once "completed"
    # with a mean queue length of 1e5
    m = mfq.Model.from_file(root / "models" / "generic" / "mm1.toml")
    with pytest.raises(mfq.NotConverged) as e:
        m.with_(lam=1.2).simulate(servers=10, time=100, warmup=10)
    assert e.value.status == "not-converged" and "mass at the truncation level" in str(e.value)
    # the stable load still simulates (a guard, not a precision test: L = 9 at every N for
    # independent M/M/1 queues; 2,000 time units at N = 200 give it within about 0.3)
    s = m.simulate(servers=200, time=2000, warmup=100)
    assert s.status == "completed" and abs(s.mean_queue_length.mean - 9.0) < 0.6, s.mean_queue_length


def test_a_sweep_axis_of_one_number_is_invalid_input():
    m = mfq.Model(kind="jsq", lam=0.5, d=2)
    for given in (0.5, np.float64(0.5), 3, True, np.array(0.5)):
        with pytest.raises(mfq.InvalidInput) as e:
            mfq.sweep(m, lam=given)
        assert e.value.field == "lambda" and "a list of values" in str(e.value)
