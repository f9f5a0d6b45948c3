//! Linear conservation laws of a model's state ([`MeanFieldModel::conservation_laws`]): the
//! checks every job makes with them, in one place. A start state must keep them
//! ([`ConservationLaw::broken_by`]: the front door's `Model::check_start`); the `N`-object
//! chain of a law whose value `v` makes `N v` no whole number is off the lattice
//! `{x : N x integer}` ([`off_lattice`]: the exact chain and the population process refuse that
//! `N` alike).
//!
//! [`MeanFieldModel::conservation_laws`]: crate::MeanFieldModel::conservation_laws

/// Relative tolerance of the checks of a law: a start whose sum misses the law's value by at
/// most `LAW_TOL * max(1, |value|)` keeps it, and `N v` within `LAW_TOL * max(1, N v)` of an
/// integer is whole (so a value written `1/3` or `0.1` in a file is not refused for its
/// round-off).
pub const LAW_TOL: f64 = 1e-9;

/// Largest `N` [`off_lattice`] tries when it names the smallest `N` for which `N v` is whole.
const LARGEST_PERIOD: u64 = 1_000_000;

/// A linear quantity every jump of a model keeps: the members of the law sum to `value`. The
/// state holds the members in `kept`; one member may be `eliminated` (computed as `value`
/// minus the sum of the kept ones, as a generic model's conservation laws are;
/// docs/models/generic.md).
#[derive(Debug, Clone, PartialEq)]
pub struct ConservationLaw {
    /// The law in words with where it is declared: `S + I + R = 1 (model.conservation[0])`.
    pub label: String,
    /// The state entries (0-based slots) of the members the state holds.
    pub kept: Vec<usize>,
    /// Their names, joined: `S + I` (shortened with `...` for long families).
    pub kept_names: String,
    /// The name of the member computed from the others, if one is eliminated.
    pub eliminated: Option<String>,
    /// The conserved value (a number of objects per object of the system, `N v` objects in all).
    pub value: f64,
}

impl ConservationLaw {
    /// The sum of the kept members at the state `x` (entries outside `x` count as 0).
    pub fn kept_sum(&self, x: &[f64]) -> f64 {
        self.kept.iter().map(|&i| x.get(i).copied().unwrap_or(0.0)).sum()
    }

    /// The range the kept members' sum must lie in: `value` when no member is eliminated, else
    /// `[max(0, value - 1), value]` (the eliminated member `value - sum` is a fraction in
    /// `[0, 1]`).
    pub fn allowed_sum(&self) -> (f64, f64) {
        match self.eliminated {
            Some(_) => ((self.value - 1.0).max(0.0), self.value),
            None => (self.value, self.value),
        }
    }

    /// `None` when the state `x` keeps the law within [`LAW_TOL`] (relative to `max(1, |value|)`);
    /// otherwise the kept members' sum found at `x` (`NaN` for a NaN entry).
    pub fn broken_by(&self, x: &[f64]) -> Option<f64> {
        let sum = self.kept_sum(x);
        let (lo, hi) = self.allowed_sum();
        let tol = LAW_TOL * self.value.abs().max(1.0);
        (sum.is_nan() || sum < lo - tol || sum > hi + tol).then_some(sum)
    }

    /// What the kept members' sum must be, in words (for messages): `a sum of 0.5 (within 1e-9
    /// relative)`, or with an eliminated member `a sum of at most 1, so that R = 1 - (S + I) is
    /// >= 0 (...)` (`in [lo, hi]` when the value exceeds 1).
    pub fn allowed_words(&self) -> String {
        let (lo, hi) = self.allowed_sum();
        match &self.eliminated {
            Some(e) if lo > 0.0 => format!(
                "a sum in [{lo}, {hi}], so that {e} = {} - ({}) is a fraction in [0, 1] (within {LAW_TOL:e} relative)",
                self.value, self.kept_names
            ),
            Some(e) => {
                format!("a sum of at most {hi}, so that {e} = {} - ({}) is >= 0 (within {LAW_TOL:e} relative)", self.value, self.kept_names)
            }
            None => format!("a sum of {hi} (within {LAW_TOL:e} relative)"),
        }
    }
}

/// `None` when the `N`-object chain of a model with these `laws` can be on the lattice
/// `{x : N x integer}` (for every law, `N value` is a whole number of objects, within
/// [`LAW_TOL`]); otherwise what is allowed, in words, naming the first law that is not (and the
/// smallest `N` that makes its value whole, when there is one up to 1e6). For a law `x + y = 0.5`,
/// `N = 1` would hold half an object: the chain's jumps of `1/N` leave the feasible set.
pub fn off_lattice(laws: &[ConservationLaw], n: usize) -> Option<String> {
    let whole = |q: f64, v: f64| {
        let objects = q * v;
        (objects - objects.round()).abs() <= LAW_TOL * objects.abs().max(1.0)
    };
    let law = laws.iter().find(|l| !whole(n as f64, l.value))?;
    let period = (1..=LARGEST_PERIOD).find(|&q| whole(q as f64, law.value));
    let multiple = match period {
        Some(q) => format!("N a multiple of {q}"),
        None => format!("no N up to {LARGEST_PERIOD} makes it whole"),
    };
    Some(format!(
        "a number of objects N for which N x {} (the value of {}) is a whole number of objects ({multiple}): with N = {n} the law's \
         members would hold {} objects, off the lattice {{x : N x integer}} of the N-object chain, whose jumps of 1/N then leave the \
         feasible set",
        law.value,
        law.label,
        n as f64 * law.value
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(value: f64, eliminated: bool) -> ConservationLaw {
        ConservationLaw {
            label: format!("x + y = {value} (model.conservation[0])"),
            kept: vec![0],
            kept_names: "x".into(),
            eliminated: eliminated.then(|| "y".into()),
            value,
        }
    }

    #[test]
    fn a_start_must_keep_the_law_within_its_tolerance() {
        let l = law(1.0, true);
        assert_eq!(l.broken_by(&[0.7]), None);
        assert_eq!(l.broken_by(&[1.0 + 1e-12]), None);
        assert_eq!(l.broken_by(&[1.2]), Some(1.2));
        assert!(l.broken_by(&[f64::NAN]).is_some_and(f64::is_nan));
        // the eliminated member must not exceed 1 either
        let l = law(1.5, true);
        assert_eq!(l.broken_by(&[0.2]), Some(0.2));
        assert_eq!(l.broken_by(&[0.5]), None);
        // without elimination the sum is the value
        let l = ConservationLaw { kept: vec![0, 1], eliminated: None, ..law(0.5, false) };
        assert_eq!(l.broken_by(&[0.2, 0.3]), None);
        assert_eq!(l.broken_by(&[0.2, 0.2]), Some(0.4));
    }

    #[test]
    fn the_lattice_needs_a_whole_number_of_objects_in_each_law() {
        let half = [law(0.5, true)];
        assert!(off_lattice(&half, 2).is_none() && off_lattice(&half, 10).is_none());
        for n in [1, 3, 7] {
            let why = off_lattice(&half, n).unwrap();
            assert!(why.contains("N a multiple of 2") && why.contains(&format!("N = {n}")), "{why}");
        }
        // round-off of a value such as 1/3 or 0.1 is no reason to refuse
        let third = [law(1.0 / 3.0, true)];
        assert!(off_lattice(&third, 3).is_none() && off_lattice(&third, 30).is_none());
        assert!(off_lattice(&third, 4).unwrap().contains("N a multiple of 3"));
        assert!(off_lattice(&[law(0.1, true)], 10).is_none());
        assert!(off_lattice(&[law(1.0, true)], 1).is_none());
    }
}
