"""The API's contract: exceptions carry their fields, arrays have the documented shapes and
dtypes, results and models pickle and unpickle equal."""

import pickle

import numpy as np
import pytest

import mfq

JSQ2 = '[model]\nkind = "jsq"\nlambda = 0.9\nd = 2\n'


def test_invalid_parameter_carries_field_value_allowed():
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="jsq", lam=-0.5, d=2)
    assert e.value.field == "model.lambda"
    assert e.value.value == "-0.5"
    assert e.value.allowed  # in words, e.g. "a number in (0, 1)"
    assert isinstance(e.value, ValueError)
    assert "model.lambda" in str(e.value)


def test_a_spec_that_is_not_a_dict_raises_invalid_input():
    """`mfq.Model([1, 2])` raised TypeError from dict(); docs/python.md: misuse raises mfq's own."""
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model([1, 2])
    assert e.value.field == "spec" and e.value.value == "[1, 2]" and "a dict" in e.value.allowed


def test_bad_override_unknown_key_and_unknown_kind():
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    with pytest.raises(mfq.InvalidInput) as e:
        m.with_(mu=3)
    assert e.value.field == "mu" and "its parameters" in e.value.allowed
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="no-such-kind", lam=0.5)
    assert e.value.field == "model.kind"
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model.from_file("/nonexistent/model.toml")
    assert e.value.field == "path" and e.value.value == "/nonexistent/model.toml"


def test_unstable_carries_reason():
    """Pod-LI with eps > 1/d beyond lambda >= 1/(eps d) is unstable (tests/reference_values.rs)."""
    m = mfq.Model(kind="pod-li", lam=0.7, d=3, eps=0.5)
    with pytest.raises(mfq.Unstable) as e:
        m.fixed_point()
    assert "1/(eps d)" in e.value.reason


def test_identical_copies_outside_their_region_have_no_dynamics():
    """Redundancy-2 with identical copies under PS is stable iff lambda < 1/d (Anton et al.,
    Oper. Res. 2021; models/redundancy-identical-ps-unstable.toml): at lambda = 0.6 every job
    says unstable, `solve` too (it integrated the i.i.d. mean field before)."""
    m = mfq.Model(kind="redundancy", lam=0.6, d=2, discipline="ps", copies="identical")
    for job in (m.fixed_point, lambda: m.solve(10.0)):
        with pytest.raises(mfq.Unstable) as e:
            job()
        assert "lambda_max = 0.5" in e.value.reason


def test_not_converged_carries_the_partial_result():
    m = mfq.Model(kind="jsq", lam=0.99, d=2)
    with pytest.raises(mfq.NotConverged) as e:
        m.fixed_point(max_iter=1)
    assert e.value.status == "max-iterations"
    fp = e.value.result
    assert isinstance(fp, mfq.FixedPoint) and fp.status == "max-iterations" and fp.residual > 1e-12
    # strict=False returns it instead
    assert m.fixed_point(max_iter=1, strict=False) == fp


def test_a_fixed_point_that_did_not_converge_reports_no_observables():
    """JSQ(2) at lambda = 0.99 after one iteration gave T = 0.909, below the mean job size 1:
    the last iterate's values read as results. The converged T is the closed form
    sum_k lambda^(2^k - 2) (Mitzenmacher 2001: x_k = lambda^(2^k - 1), T = L / lambda)."""
    m = mfq.Model(kind="jsq", lam=0.99, d=2)
    fp = m.fixed_point(max_iter=1, strict=False)
    assert not fp.converged and fp.x.size > 0
    for name in ("mean_response_time", "mean_queue_length", "prob_wait", "throughput", "loss_probability"):
        assert getattr(fp, name) is None, name
    assert fp.tail.shape == (0,) and fp.extras == {}
    closed = sum(0.99 ** (2**k - 2) for k in range(1, 30))
    assert m.fixed_point().mean_response_time == pytest.approx(closed, rel=1e-8)


def test_option_and_state_errors_carry_fields():
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    with pytest.raises(mfq.InvalidInput) as e:
        m.fixed_point(tol=-1.0)
    assert (e.value.field, e.value.value) == ("tol", "-1")
    with pytest.raises(mfq.InvalidInput) as e:
        m.simulate(0)
    assert e.value.field == "servers"
    with pytest.raises(mfq.InvalidInput) as e:
        m.drift(np.zeros(3), levels=5)
    assert e.value.field == "x" and e.value.value == "3 entries"
    with pytest.raises(mfq.InvalidInput) as e:
        m.refined(order=3)
    assert e.value.field == "order" and e.value.value == "3"
    with pytest.raises(mfq.InvalidInput) as e:
        m.refined(servers=[0.5])
    assert e.value.field == "servers"
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(kind="jiq", lam=0.5).refined()
    assert e.value.field == "kind"


def test_exceptions_pickle_with_their_fields():
    for err in (mfq.InvalidInput("m", "model.d", "0", "an integer >= 1"), mfq.Unstable("u", "lambda >= 1"),
                mfq.NotConverged("n", "time-limit", None)):  # fmt: skip
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and back.args == err.args and str(back) == str(err)
    assert pickle.loads(pickle.dumps(mfq.InvalidInput("m", "model.d", "0", "x"))).field == "model.d"


def test_fixed_point_shapes_and_dtypes():
    fp = mfq.Model.from_toml(JSQ2).fixed_point()
    k = fp.truncation
    assert fp.x.dtype == np.float64 and fp.x.shape == (k,)
    assert fp.tail.dtype == np.float64 and fp.tail.shape == (k,)
    assert isinstance(fp.residual, float) and isinstance(fp.truncation, int)
    assert fp.status == "converged" and fp.converged
    assert set(fp.to_dict()) == set(mfq.FixedPoint._fields)  # the fast path builds every field
    m = mfq.Model.from_toml(JSQ2)
    assert m.drift(fp.x).shape == (k,) and m.drift(fp.x).dtype == np.float64
    j = m.jacobian(fp.x)
    assert j.shape == (k, k) and j.dtype == np.float64


def test_trajectory_shapes():
    m = mfq.Model.from_toml(JSQ2 + "[truncation]\nlevels = 10\n")
    traj = m.solve(5.0)
    assert traj.t.shape == (101,) and traj.x.shape == (101, 10)
    assert traj.t.dtype == np.float64 and traj.x.dtype == np.float64
    traj = m.solve(5.0, x0=np.full(10, 0.5) ** np.arange(1, 11), t_eval=[0.0, 2.5, 5.0])
    assert traj.x.shape == (3, 10) and traj.status == "success"


def test_solve_refuses_start_states_outside_the_state_space():
    # as `mfq solve --x0` does: the broken constraint and the entry are named
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for x0 in ([2.0, -1.0], [0.5, 0.9, 0.1], [1.5, 0.2]):
        with pytest.raises(mfq.InvalidInput) as e:
            m.solve(5.0, x0=x0)
        assert e.value.field == "x0" and "x_{k+1} <= x_k" in str(e.value), str(e.value)
    assert m.solve(1.0, x0=[0.9, 0.729, 0.478], t_eval=[0.0, 1.0]).status == "success"


def test_a_start_that_breaks_a_conservation_law_is_refused():
    # SIRS, S + I + R = 1 with R eliminated: (S, I) = (0.7, 0.5) would make R = -0.2; solve,
    # drift and fixed_point refused nothing and projected the start onto another state
    from pathlib import Path

    m = mfq.Model.from_file(Path(__file__).resolve().parents[2] / "models" / "generic" / "sir.toml")
    calls = {
        "solve": lambda x: m.solve(1.0, x0=x, t_eval=[0.0, 1.0]),
        "drift": lambda x: m.drift(np.array(x)),
        "fixed_point": lambda x: m.fixed_point(x0=np.array(x)),
    }
    for name, call in calls.items():
        with pytest.raises(mfq.InvalidInput) as e:
            call([0.7, 0.5])
        text = str(e.value)
        assert e.value.field in ("x", "x0"), (name, text)
        for part in ("S + I + R = 1", "S + I", "1.2", "at most 1", "R = 1 - (S + I)"):
            assert part in text, (name, part, text)
        # a start on the law passes: S + I = 1 is R = 0
        call([0.7, 0.3])


def test_simulate_refuses_negative_counts_naming_the_option():
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for option in ("servers", "replications", "batches", "seed", "buffer"):
        with pytest.raises(mfq.InvalidInput) as e:
            m.simulate(**{option: -1})
        assert e.value.field == option, str(e.value)
    with pytest.raises(mfq.InvalidInput):
        m.simulate(servers=2.5)


def test_results_and_models_pickle_equal():
    m = mfq.Model(kind="jsq", lam=0.9, d=2, title="t")
    assert pickle.loads(pickle.dumps(m)) == m
    assert mfq.Model.from_toml(m.to_toml()) == m
    fp = m.fixed_point()
    back = pickle.loads(pickle.dumps(fp))
    assert back == fp and back.x.dtype == np.float64
    assert back != m.with_(lam=0.8).fixed_point()
    r = m.refined()
    assert pickle.loads(pickle.dumps(r)) == r and r.W.shape == (r.x.size, r.x.size)
    sim = m.simulate(20, time=200.0, warmup=20.0, replications=2)
    assert pickle.loads(pickle.dumps(sim)) == sim
    assert sim.tail.shape == sim.tail_half_width.shape and sim.tail.dtype == np.float64
    s = mfq.sweep(m, lam=[0.5, 0.9])
    assert all(np.array_equal(a, b) for a, b in zip(pickle.loads(pickle.dumps(s)).values(), s.values()) if not isinstance(a, list))
    assert pickle.loads(pickle.dumps(s)) == s and type(s.to_dict()) is dict and s.to_dict().keys() == s.keys()
    assert s != mfq.sweep(m, lam=[0.5, 0.8])
    traj = m.solve(1.0, t_eval=[0.0, 1.0])
    assert pickle.loads(pickle.dumps(traj)) == traj


def test_constructors_agree():
    a = mfq.Model(kind="jsq", lam=0.9, d=2)
    b = mfq.Model({"kind": "jsq", "lambda": 0.9, "d": 2})
    c = mfq.Model({"model": {"kind": "jsq", "lambda": 0.9, "d": 2}})
    d = mfq.Model.from_toml(JSQ2)
    e = mfq.Model(kind="jsq", lam=0.5, d=2).with_(lam=0.9)
    assert a == b == c == d == e
    assert a.with_(**{"truncation.levels": 40}).fixed_point().truncation == 40


def test_models_catalogue():
    kinds = {k["kind"]: k for k in mfq.models()}
    assert {"jsq", "pod-li", "pod-ld", "jiq", "redundancy"} <= kinds.keys()
    assert any(p["name"] == "lambda" for p in kinds["jsq"]["parameters"])


def test_check_verdict():
    c = mfq.Model(kind="jsq", lam=0.9, d=2).check(starts=4)
    assert c.verdict == "certified" and c.equilibria == 1
    assert c.fixed_point.converged and "all 4 random starts agree" in c.summary


def test_sweep_columns_and_pandas():
    s = mfq.sweep(mfq.Model(kind="jsq", lam=0.5, d=2), lam=np.linspace(0.5, 0.9, 3))
    assert s["lambda"].dtype == np.float64 and s["lambda"].shape == (3,)
    assert s["truncation"].dtype == np.int64 and len(s["tails"]) == 3
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(mfq.Model(kind="jsq", lam=0.5, d=2), mu=[1.0, 2.0])
    assert e.value.field == "mu"
    pd = pytest.importorskip("pandas")
    df = s.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 3


def test_max_seconds_is_checked_as_the_cli_does():
    """A NaN limit was ignored and a negative one reported as a time-out (NotConverged)."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    for bad in (-1.0, 0.0, float("nan"), float("inf"), "soon"):
        with pytest.raises(mfq.InvalidInput) as e:
            m.fixed_point(max_seconds=bad)
        assert e.value.field == "max_seconds"
    with pytest.raises(mfq.InvalidInput):
        m.simulate(servers=10, time=10.0, max_seconds=-1.0)
    assert m.fixed_point(max_seconds=10.0).converged


def test_refined_terms_too_large_for_memory_raise_instead_of_aborting():
    """JSQ(1) at lambda = 0.999 needs K = 27612 levels: the refined terms' dense n x n matrices
    (about 14 of them, 8 bytes an entry: 14 * 8 * 27612^2 = 85.4 GB) and K = 100,000 (1.1 TB)
    aborted the interpreter (a failed allocation in refined::noise_matrix). The call now raises
    InvalidInput naming the truncation level, the bytes and the limit, at once, and the
    interpreter goes on (a small model's terms after it)."""
    import time

    for model, k in (
        (mfq.Model(kind="jsq", lam=0.999, d=1), 27612),
        (mfq.Model(kind="jsq", lam=0.9, d=2).with_(**{"truncation.levels": 100_000}), 100_000),
    ):
        for order in (1, 2):
            start = time.perf_counter()
            with pytest.raises(mfq.InvalidInput) as e:
                model.refined(order, servers=[10])
            assert time.perf_counter() - start < 20
            assert e.value.field == "truncation.levels" and e.value.value == str(k), (e.value.field, e.value.value)
            message = str(e.value)
            assert f"n = {k} state entries" in message and "more than the limit of" in message and "MFQ_MEMORY_LIMIT" in message
            if order == 1 and k == 27612:
                assert "about 85.4 GB" in message, message
    # sum V of JSQ(2) at lambda = 0.9, K = 20: 3.986427 (rmf_tool and a SciPy script, tests/refined.rs)
    r = mfq.Model(kind="jsq", lam=0.9, d=2).with_(**{"truncation.levels": 20}).refined(servers=[10])
    assert abs(r.sum_v - 3.986427) < 1e-6


def test_a_large_model_file_is_read_within_max_seconds(tmp_path):
    """``from_file`` / ``from_toml`` parse within ``max_seconds``: a generic model of 200,000
    transitions (16 MB) took 5.6 s to read here with no way to stop it; with
    ``max_seconds=0.01`` it stops in about 0.03 s (NotConverged, the deadline's message)."""
    import time

    parts = ['[model]\nkind = "generic"\nname = "many"\nvariables = ["X"]\n']
    for i in range(200_000):
        jump, rate = (1, "(1 - X) * (1 + X) * 0.001") if i % 2 == 0 else (-1, "X * 0.001")
        parts.append(f'[[model.transitions]]\nname = "t{i}"\njump = {{ X = {jump} }}\nrate = "{rate}"\n')
    text = "".join(parts)
    path = tmp_path / "many.toml"
    path.write_text(text)
    for read in (lambda: mfq.Model.from_file(path, max_seconds=0.01), lambda: mfq.Model.from_toml(text, max_seconds=0.01)):
        started = time.monotonic()
        with pytest.raises(mfq.NotConverged) as e:
            read()
        assert time.monotonic() - started < 1.5
        assert "TOML parse" in str(e.value)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model.from_toml(JSQ2, max_seconds=-1)
    assert e.value.field == "max_seconds"
    assert mfq.Model.from_toml(JSQ2, max_seconds=5, lam=0.95) == mfq.Model(kind="jsq", lam=0.95, d=2)
