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
        "mfq.sweep keyword lam: the value [0.5, 0.6] is not allowed: model.lambda takes a finite number (the file has a number there); "
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
        allowed = (
            "'empty', 'full', 'initial' (named starts, as mfq solve --x0; 'initial' is the model file's [model.initial]), "
            "or a 1-D sequence of numbers (a state of the model, in its layout)"
        )
        assert str(e.value) == f"x0 = 'fill' is not allowed: {allowed}"
        assert (e.value.field, e.value.value, e.value.allowed) == ("x0", "'fill'", allowed)


LEAVING = '[model]\nkind = "generic"\nvariables = ["X"]\n[[model.transitions]]\njump = { X = 1 }\nrate = "5"\n'


@pytest.mark.parametrize("servers", [[10**30], 10**30, [5, 2**64], [np.uint64(2**64 - 1)]])
def test_an_exact_size_beyond_the_integer_names_servers(servers):
    """`exact(servers=[10**30])` raised a bare OverflowError (the compiled module's usize)."""
    m = mfq.Model(**JSQ2)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.exact(m, servers=servers, buffer=3)
    big = servers if isinstance(servers, int) else servers[-1]
    allowed = "an integer in [1, 100000]"
    assert str(e.value) == f"servers = {int(big)} is not allowed: {allowed}"
    assert (e.value.field, e.value.value, e.value.allowed) == ("servers", str(int(big)), allowed)
    # the core's own words for a size in range of the type but not of the chain
    with pytest.raises(mfq.InvalidInput) as e:
        m.exact(servers=[100_001], buffer=3)
    assert e.value.allowed == allowed


def test_a_dicts_error_names_its_key_not_a_line():
    """A model from a dict said `TOML parse error at line 6, column 1 (levelz = 3)` (a line of the
    text written from the dict) in the message and in `.allowed`."""
    cases = [
        ({"model": {"kind": "jsq", "lambda": 0.9, "d": 2}, "truncation": {"levelz": 3}}, "truncation.levelz", "3",
         "mfq.Model key truncation.levelz: unknown field `levelz`, expected one of `levels`, `tol`, `max_levels`, `buffer`"),
        ({"kind": "jsq", "lambda": 0.9, "d": "two"}, "model.d", '"two"',
         'mfq.Model key model.d: invalid type: string "two", expected an integer in [1, 10000]'),
        ({"kind": "jsq", "lambda": 0.9, "d": 2, "truncation": {"levels": 2.5}}, "truncation.levels", "2.5",
         "mfq.Model key truncation.levels: invalid type: floating point `2.5`, expected an integer in [1, 10000000]"),
    ]  # fmt: skip
    for spec, field, value, message in cases:
        with pytest.raises(mfq.InvalidInput) as e:
            mfq.Model(spec)
        assert str(e.value) == message
        assert (e.value.field, e.value.value, e.value.allowed) == (field, value, message)
        assert "line" not in e.value.allowed
    # a file's text keeps its line: the user wrote it
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model.from_toml('[model]\nkind = "jsq"\nlambda = 0.9\nd = "two"\n')
    assert str(e.value).startswith('TOML parse error at line 4, column 1 (d = "two"): model.d:')


def test_an_overrides_error_names_the_call_not_set():
    """`with_(d="two")` said `after --set d="two"` (the CLI's option) in the message and `.allowed`."""
    m = mfq.Model(**JSQ2)
    with pytest.raises(mfq.InvalidInput) as e:
        m.with_(lam=0.95, d="two")
    message = 'with_(lam=0.95, d="two"): model.d: invalid type: string "two", expected an integer in [1, 10000]'
    assert str(e.value) == message
    assert (e.value.field, e.value.value, e.value.allowed) == ("model.d", '"two"', message)
    with pytest.raises(mfq.InvalidInput) as e:
        m.with_(**{"truncation.levelz": 3})
    message = 'with_(**{"truncation.levelz": 3}): truncation.levelz: unknown field `levelz`, expected one of `levels`, `tol`, `max_levels`, `buffer`'
    assert str(e.value) == message and e.value.allowed == message
    # an override naming no key: the call, and the reason as `.allowed`
    with pytest.raises(mfq.InvalidInput) as e:
        m.with_(mu=1.0)
    reason = "kind jsq has no parameter 'mu' (its parameters: lambda, d; see `mfq models`)"
    assert str(e.value) == f"with_(mu=1.0): {reason}"
    assert (e.value.field, e.value.allowed) == ("mu", reason)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model.from_toml(m.to_toml(), d="two")
    assert str(e.value).startswith('Model.from_toml(d="two"): model.d: invalid type')
    assert "--set" not in str(e.value)


def test_a_misspelt_truncation_axis_is_refused_before_the_sweep():
    """`sweep(m, **{"truncation.levles": [...]})` marked every point invalid."""
    m = mfq.Model(**JSQ2)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=[0.5, 0.6], **{"truncation.levles": [20, 30]})
    allowed = "'levles' is not a key of [truncation]; allowed: truncation.levels, truncation.tol, truncation.max_levels, truncation.buffer"
    assert str(e.value) == f"mfq.sweep keyword truncation.levles: {allowed}"
    assert (e.value.field, e.value.allowed) == ("truncation.levles", allowed)
    r = mfq.sweep(m, lam=[0.5, 0.6], **{"truncation.levels": [20, 30]})
    assert list(r["status"]) == ["solved"] * 4


def test_a_sweeps_errors_name_its_keyword_not_set():
    """A refused axis of `mfq.sweep` said `--set NAME` (the CLI's option), and a refused value
    of a table's law `after --set job_size={law = "gamma"}`; an invalid point's reason began
    `after --set lambda=0.5 --set d=2.5:`."""
    m = mfq.Model(**JSQ2)
    allowed = "not a key of the model file (sweep a parameter the file sets)"
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=[0.5, 0.6], dd=[1, 2])
    assert str(e.value) == f"mfq.sweep keyword dd: {allowed}"
    assert (e.value.field, e.value.allowed) == ("dd", allowed)
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(m, lam=["x", "y"])
    allowed = "the value x is not allowed: model.lambda takes a finite number (the file has a number there)"
    assert str(e.value) == f"mfq.sweep keyword lam: {allowed}"
    assert (e.value.field, e.value.allowed) == ("lambda", allowed)
    lld = mfq.Model(kind="lld", lam=0.9, d=2, job_size={"law": "h2", "mean": 1.0, "scv": 9.0, "f": 0.5})
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.sweep(lld, lam=[0.5], **{"job_size.law": ["gamma"]})
    allowed = (
        "the value gamma is not allowed: model.job_size.law: unknown variant `gamma`, expected one of `exponential`, `h2`, "
        "`erlang`, `coxian`, `phase-type`"
    )
    assert str(e.value) == f"mfq.sweep keyword job_size.law: {allowed}"
    assert (e.value.field, e.value.allowed) == ("job_size.law", allowed)
    # a value the key does not take at some points: those points' reasons name the key
    with pytest.warns(RuntimeWarning, match="2 of 4 sweep points") as w:
        r = mfq.sweep(m, lam=[0.5, 0.6], d=[2.5, 2])
    reason = "model.d: invalid type: floating point `2.5`, expected an integer in [1, 10000]"
    assert list(r["status"]) == ["invalid", "invalid", "solved", "solved"]
    assert list(r["reason"]) == [reason, reason, "", ""]
    assert str(w[0].message).endswith(f"the first at lambda = 0.5, d = 2.5: {reason}")


def test_a_generic_state_of_the_wrong_size_names_the_argument(root):
    """A state of the wrong size for a one-variable generic model (`Error::StateEntries`) had
    `.field` None (it fell to the generic arm of python/src/errors.rs)."""
    sis = mfq.Model.from_file(root / "models/generic/sis.toml")
    allowed = "1 entry (X; the same at every truncation level)"
    tail = "has 2 entries; the model has 1 entry (X), whatever the truncation level (its size has no level K); allowed: a state of 1 entry"
    for call, field in ((lambda: sis.fixed_point(x0=[0.1, 0.2]), "x0"), (lambda: sis.drift([0.1, 0.2]), "x"), (lambda: sis.jacobian([0.1, 0.2]), "x")):
        with pytest.raises(mfq.InvalidInput) as e:
            call()
        assert str(e.value) == f"{field} {tail}"
        assert (e.value.field, e.value.value, e.value.allowed) == (field, "2 entries", allowed)
    with pytest.raises(mfq.InvalidInput) as e:
        sis.drift([])
    assert str(e.value) == "x has 0 entries (an empty state); allowed: a state of the model, 1 entry (X)"
    assert (e.value.field, e.value.value, e.value.allowed) == ("x", "0 entries", allowed)


def test_a_dotted_truncation_keyword_reaches_the_truncation_table():
    """`Model(..., **{"truncation.levelz": 3})` put the key under [model] ("model.truncation:
    unknown field"), and so did the valid `truncation.levels`."""
    with pytest.raises(mfq.InvalidInput) as e:
        mfq.Model(**JSQ2, **{"truncation.levelz": 3})
    message = "mfq.Model key truncation.levelz: unknown field `levelz`, expected one of `levels`, `tol`, `max_levels`, `buffer`"
    assert str(e.value) == message
    assert (e.value.field, e.value.value) == ("truncation.levelz", "3")
    m = mfq.Model(**JSQ2, **{"truncation.levels": 30})
    assert m == mfq.Model(**JSQ2).with_(**{"truncation.levels": 30})
    # with a dict's own [truncation] table (the keyword wins), and `model.` names
    spec = {"model": {"kind": "jsq", "lambda": 0.9, "d": 2}, "truncation": {"levels": 20, "tol": 1e-10}}
    assert mfq.Model(spec, **{"truncation.levels": 30, "model.d": 3}) == mfq.Model(**JSQ2).with_(
        d=3, **{"truncation.levels": 30, "truncation.tol": 1e-10}
    )
    assert spec["truncation"] == {"levels": 20, "tol": 1e-10}


def test_a_transient_pushed_out_of_the_state_space_is_refused(root):
    """`solve` of a generic model with `X += 1` at the constant rate 5 returned x = [1.] (held
    at the face by the integrator); `fixed_point` and `mfq solve` refuse it (exit code 2)."""
    m = mfq.Model.from_toml(LEAVING)
    allowed = (
        "transitions whose rate is 0 wherever their jump would leave the state space (every entry in [0, 1], conservation laws "
        "kept): a factor that vanishes at the face, e.g. (1 - X) for a jump X += 1"
    )
    for call in (lambda: m.solve(5.0), lambda: m.solve(5.0, levels=1), lambda: m.fixed_point()):
        with pytest.raises(mfq.InvalidInput) as e:
            call()
        assert e.value.field == "model.transitions[0]"
        assert e.value.value.startswith('its rate "5" is 5.0000e0 > 0 at X = '), e.value.value
        assert "where its jump X += 1 would take X above 1" in e.value.value
        assert e.value.allowed == allowed
    with pytest.raises(mfq.InvalidInput) as e:
        m.solve(5.0)
    assert "the transient ends on that face, its state held there by the integrator's projection" in str(e.value)
    # a valid model that starts at the same face: the SIS model's full state (X = 1) solves
    sis = mfq.Model.from_file(root / "models/generic/sis.toml")
    assert sis.solve(5.0, x0="full").status == "success"


def test_initial_is_a_start_name(root):
    """`fixed_point(x0="initial")` was refused; a model file's [model.initial] state is a start
    as `mfq solve --x0 initial` takes it."""
    sir = mfq.Model.from_file(root / "models/generic/sir.toml")
    assert list(sir.solve(1.0, x0="initial").x[0]) == [0.99, 0.01]
    fp = sir.fixed_point(x0="initial")
    assert fp.converged and np.allclose(fp.x, sir.fixed_point().x, atol=1e-9)
    m = mfq.Model(**JSQ2)
    for call in (lambda: m.fixed_point(x0="initial"), lambda: m.solve(1.0, x0="initial")):
        with pytest.raises(mfq.InvalidInput) as e:
            call()
        allowed = (
            "JSQ(2) declares no [model.initial] state, so there is no start named 'initial' (allowed: empty, full, or the entries "
            "of a state; a generic model declares [model.initial], docs/models/generic.md)"
        )
        assert str(e.value) == f"x0 = 'initial' is not allowed: {allowed}"
        assert (e.value.field, e.value.value, e.value.allowed) == ("x0", "'initial'", allowed)
