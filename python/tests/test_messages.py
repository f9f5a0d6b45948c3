"""Error messages of a new user's mistakes name the field, the value and what is allowed (the
review of the Python package and the CLI; docs/python.md, "Errors"). Each test checks the
exact text the core or the Python layer gives, and the exception's fields."""

import numpy as np
import pytest

import mfq

JSQ2 = dict(kind="jsq", lam=0.9, d=2)


def test_an_integer_beyond_64_bits_names_the_key_and_its_range():
    """`d = 10**30` gave a TOML parse error with no range ("expected any valid TOML value"),
    field None; through `with_` it said "invalid type: string"."""
    for make in (lambda: mfq.Model(kind="jsq", lam=0.9, d=10**30), lambda: mfq.Model(**JSQ2).with_(d=10**30)):
        with pytest.raises(mfq.InvalidInput) as e:
            make()
        assert str(e.value) == "model.d = 1e30 is not allowed: an integer in [1, 10000]"
        assert (e.value.field, e.value.value, e.value.allowed) == ("model.d", "1e30", "an integer in [1, 10000]")


def test_a_misspelled_truncation_key_is_named():
    """`truncation.levelz` (a dict, a file's text, an override) had `.field` None."""
    text = '[model]\nkind = "jsq"\nlambda = 0.9\nd = 2\n[truncation]\nlevelz = 3\n'
    expected = "unknown field `levelz`, expected one of `levels`, `tol`, `max_levels`, `buffer`"
    for make in (
        lambda: mfq.Model({"model": {"kind": "jsq", "lambda": 0.9, "d": 2}, "truncation": {"levelz": 3}}),
        lambda: mfq.Model.from_toml(text),
        lambda: mfq.Model(**JSQ2).with_(**{"truncation.levelz": 3}),
    ):
        with pytest.raises(mfq.InvalidInput) as e:
            make()
        assert e.value.field == "truncation.levelz" and e.value.value == "3", (e.value.field, e.value.value)
        assert str(e.value).endswith("truncation.levelz: " + expected), str(e.value)


def test_a_chain_over_max_states_names_max_states():
    """A chain larger than `max_states` had `.field` None."""
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(**JSQ2).exact(servers=[20], buffer=5, max_states=10)
    assert e.value.field == "max_states" and e.value.value == "10"
    assert e.value.allowed == "an integer >= the chain's 5.313e4 states (~300 bytes per state), or fewer servers or a smaller buffer"
    assert str(e.value).startswith("the exact chain has 5.313e4 states, more than the limit of 10")


def test_a_bad_buffer_names_buffer():
    """`exact(buffer=0)` named `truncation.levels`, the key it sets, as `mfq exact --buffer 0` did."""
    for k in (0, 10_000_001):
        with pytest.raises(mfq.InvalidInput) as e:
            mfq.Model(**JSQ2).exact(servers=[5], buffer=k)
        allowed = "an integer in [1, 10000000] (the buffer K of every server; it sets truncation.levels)"
        assert str(e.value) == f"buffer = {k} is not allowed: {allowed}"
        assert (e.value.field, e.value.value, e.value.allowed) == ("buffer", str(k), allowed)


def test_an_empty_state_names_x_and_the_size_expected():
    """`drift([])` named `truncation.levels = 0`."""
    m = mfq.Model(**JSQ2)
    k = m.fixed_point().levels_tried[0]
    for call in (m.drift, m.jacobian):
        with pytest.raises(mfq.InvalidInput) as e:
            call([])
        assert str(e.value) == f"x has 0 entries (an empty state); allowed: a state of the model, {k} entries at truncation level K = {k}"
        assert (e.value.field, e.value.value) == ("x", "0 entries")
    # a model that fixes its level names that one
    with pytest.raises(mfq.InvalidInput) as e:
        m.with_(**{"truncation.levels": 20}).drift(np.array([]))
    assert e.value.allowed == "20 entries (the model's states at K = 20)"


@pytest.mark.parametrize("value", ["no", 0, 1, None, "False", np.array([True])])
def test_strict_must_be_a_bool(value):
    """`strict="no"` was read as true (a non-empty string)."""
    m = mfq.Model(**JSQ2)
    calls = (
        lambda: m.fixed_point(strict=value),
        lambda: m.solve(1.0, strict=value),
        lambda: m.simulate(10, time=10.0, warmup=1.0, strict=value),
        lambda: m.exact(servers=[3], buffer=3, strict=value),
        lambda: m.check(starts=2, strict=value),
        lambda: mfq.sweep(m, lam=[0.5], strict=value),
    )
    for call in calls:
        with pytest.raises(mfq.InvalidInput) as e:
            call()
        assert str(e.value) == f"strict = {value!r} is not allowed: True or False"
        assert e.value.field == "strict" and e.value.allowed == "True or False"
    assert m.fixed_point(strict=np.bool_(False)).converged


def test_a_2d_sweep_axis_is_refused():
    """A 2-D array was flattened into one axis of its four entries; a nested list reached the
    core as lists, refused without saying an axis is 1-D."""
    m = mfq.Model(**JSQ2)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=np.array([[0.5, 0.6], [0.7, 0.8]]))
    allowed = "a 1-D sequence of numbers, names or dicts, one per point"
    assert str(e.value) == f"lambda: an array of shape (2, 2); allowed: {allowed}"
    assert (e.value.field, e.value.value, e.value.allowed) == ("lambda", "an array of shape (2, 2)", allowed)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=[[0.5, 0.6], [0.7, 0.8]])
    assert e.value.field == "lambda"
    assert str(e.value) == (
        "--set lambda: the value [0.5, 0.6] is not allowed: model.lambda takes a finite number (the file has a number there); "
        "an axis is a 1-D sequence of values, one per point"
    )


def test_named_starts_as_the_cli_takes_them():
    """`solve(x0="full")` was refused (shape ()); the CLI takes `--x0 empty|full`."""
    m = mfq.Model(**JSQ2)
    full = m.solve(5.0, x0="full", levels=6)
    assert np.array_equal(full.x[0], np.ones(6))
    empty = m.solve(5.0, x0="empty", levels=6)
    assert np.array_equal(empty.x[0], np.zeros(6))
    assert np.array_equal(m.solve(5.0, levels=6).x, empty.x)
    # from full, the tail decreases towards x* (x_1 = lambda = 0.9 at the fixed point)
    assert full.x[-1][0] > 0.9 > empty.x[-1][0]
    fp = m.fixed_point(x0="full")
    assert fp.converged and abs(fp.x[0] - 0.9) < 1e-12
    for call in (lambda: m.solve(1.0, x0="fill"), lambda: m.fixed_point(x0="fill")):
        with pytest.raises(mfq.InvalidInput) as e:
            call()
        allowed = "'empty', 'full' (named starts, as mfq solve --x0), or a 1-D sequence of numbers (a state of the model, in its layout)"
        assert str(e.value) == f"x0 = 'fill' is not allowed: {allowed}"
        assert (e.value.field, e.value.value, e.value.allowed) == ("x0", "'fill'", allowed)
