//! Job-size laws: exponential, hyperexponential H2, Erlang-k, Coxian and general phase-type,
//! all held in one representation ([`PhaseType`]), and their model-file form ([`JobSizeSpec`]).
//!
//! # Phase-type representation
//!
//! A phase-type law `PH(alpha, A)` with `m` phases is the time to absorption of a Markov chain
//! started in phase `j` with probability `alpha_j`, moving `j -> j'` at rate `A_{j j'}`
//! (`j != j'`) and completing from phase `j` at the exit rate `nu_j = -(A 1)_j`. Units: time at a
//! unit-rate server (the job size). Moments: `E[S] = alpha (-A)^{-1} 1`,
//! `E[S^2] = 2 alpha (-A)^{-2} 1`, `SCV = E[S^2] / E[S]^2 - 1`.
//!
//! # H2 in Coxian form
//!
//! An H2 law (rate `mu1` with probability `p`, else rate `mu2`, `mu1 >= mu2`) equals the
//! Coxian-2 law that starts in phase 1 (rate `mu1`) and on leaving it enters phase 2 (rate `mu2`)
//! with probability `a = (1 - p)(mu1 - mu2)/mu1`, else completes:
//!
//! ```text
//! alpha = (1, 0),   A = [[-mu1, a mu1], [0, -mu2]],   nu = (p mu1 + (1 - p) mu2, mu2).
//! ```
//!
//! Equate the Laplace transforms: `mu1/(mu1+s) [(1-a) + a mu2/(mu2+s)]` and
//! `p mu1/(mu1+s) + (1-p) mu2/(mu2+s)` agree iff `mu1 (1 - a) = p mu1 + (1 - p) mu2`. New jobs
//! start in the lowest phase and the exit rates are non-increasing in the phase (`nu_1 >= nu_2`):
//! the labelling under which the staircase order is monotone (docs/models/phase-type.md, "Which
//! order is monotone"; B. Van Houdt, "Global attraction of ODE-based mean field models with
//! hyperexponential job sizes", POMACS 3(2), 2019, whose abstract names this Coxian form).
//!
//! The H2 family of T. Hellemans' thesis (the SIGMETRICS 2018 LL(d) paper and its companions)
//! is given by its mean, its SCV and `f`, the fraction of the **load** carried by the fast jobs
//! (`p / mu1 = f E[S]`). With `E[S] = 1`,
//!
//! ```text
//! mu1 = [SCV + 4f - 1 + sqrt((SCV - 1)(SCV - 1 + 8 f (1 - f)))] / (2 f (SCV + 1)),
//! p = f mu1,   mu2 = (1 - p) / (1 - f),
//! ```
//!
//! the larger root of `(SCV + 1) f mu1^2 - (SCV + 4f - 1) mu1 + 2f = 0` (from `p + (1-p) = 1`
//! and `E[S^2] = 2p/mu1^2 + 2(1-p)/mu2^2 = SCV + 1`); for `f = 1/2`,
//! `mu_{1,2} = 1 +- sqrt((SCV - 1)/(SCV + 1))`. Other means scale both rates by `1/E[S]`.
//! "E[S^2] = 10" is SCV = 9; "balanced means" is `f = 1/2` (the thesis' wording).

use crate::{out_of_range, ModelError};
use serde::{Deserialize, Serialize};

/// Largest number of phases accepted (the LL(d) model keeps its per-step work on the stack).
pub const MAX_PHASES: usize = 16;

/// A job-size law in phase-type form `PH(alpha, A)`, validated.
///
/// Rates are per unit time at a unit-rate server; `A` is stored row-major (`m x m`).
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseType {
    alpha: Vec<f64>,
    a: Vec<f64>,
    exit: Vec<f64>,
    mean_residual: Vec<f64>,
    mean: f64,
    second_moment: f64,
    label: String,
}

/// How `(A 1)_j` may deviate from `<= 0` and `sum alpha` from 1 (round-off in a model file).
const SUM_TOL: f64 = 1e-9;

fn finite_positive(field: &str, v: f64) -> Result<(), ModelError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(out_of_range(field, v, "a finite number > 0"))
    }
}

impl PhaseType {
    /// A general phase-type law: initial probabilities `alpha` (length `m`) and sub-generator
    /// `a` (`m` rows of length `m`).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming the field (`model.job_size.alpha[j]`,
    /// `model.job_size.a[i][j]`, `model.job_size.a`) when: `m` is 0 or above [`MAX_PHASES`];
    /// a row has the wrong length; an entry is not finite; `alpha_j < 0` or `sum alpha != 1`;
    /// an off-diagonal rate is negative; a diagonal entry is not negative; a row sums to more
    /// than 0 (negative exit rate); or `A` is singular (some phase never leads to completion).
    pub fn new(alpha: Vec<f64>, a: Vec<Vec<f64>>) -> Result<Self, ModelError> {
        let m = alpha.len();
        if m == 0 || m > MAX_PHASES {
            return Err(out_of_range("model.job_size.alpha", format!("{m} phases"), "between 1 and 16 phases"));
        }
        if a.len() != m {
            return Err(out_of_range("model.job_size.a", format!("{} rows", a.len()), "as many rows as alpha has entries"));
        }
        for (j, &v) in alpha.iter().enumerate() {
            if !(v.is_finite() && v >= 0.0) {
                return Err(out_of_range(&format!("model.job_size.alpha[{j}]"), v, "a probability >= 0"));
            }
        }
        let total: f64 = alpha.iter().sum();
        if (total - 1.0).abs() > SUM_TOL {
            return Err(out_of_range("model.job_size.alpha", format!("{alpha:?} (sum {total})"), "probabilities summing to 1"));
        }
        let mut flat = Vec::with_capacity(m * m);
        for (i, row) in a.iter().enumerate() {
            if row.len() != m {
                return Err(out_of_range(
                    &format!("model.job_size.a[{i}]"),
                    format!("{} entries", row.len()),
                    "m entries (m = number of phases)",
                ));
            }
            for (j, &v) in row.iter().enumerate() {
                let field = format!("model.job_size.a[{i}][{j}]");
                if !v.is_finite() {
                    return Err(out_of_range(&field, v, "a finite rate"));
                }
                if i == j && v >= 0.0 {
                    return Err(out_of_range(&field, v, "a negative diagonal entry (minus the total rate out of the phase)"));
                }
                if i != j && v < 0.0 {
                    return Err(out_of_range(&field, v, "an off-diagonal rate >= 0"));
                }
            }
            let sum: f64 = row.iter().sum();
            if sum > SUM_TOL * row[i].abs().max(1.0) {
                return Err(out_of_range(
                    &format!("model.job_size.a[{i}]"),
                    format!("{row:?} (row sum {sum})"),
                    "row sums <= 0 (the exit rate -sum_j A_ij of each phase is >= 0)",
                ));
            }
            flat.extend_from_slice(row);
        }
        let exit: Vec<f64> = (0..m).map(|i| (-flat[i * m..(i + 1) * m].iter().sum::<f64>()).max(0.0)).collect();
        // mean residual sizes r = (-A)^{-1} 1 and (-A)^{-1} r
        let neg: Vec<f64> = flat.iter().map(|v| -v).collect();
        let singular = || {
            out_of_range("model.job_size.a", format!("{a:?}"), "a sub-generator from whose every phase the job completes (A nonsingular)")
        };
        let r = solve_dense(&neg, &vec![1.0; m]).ok_or_else(singular)?;
        if r.iter().any(|v| !v.is_finite() || *v <= 0.0) {
            return Err(singular());
        }
        let r2 = solve_dense(&neg, &r).ok_or_else(singular)?;
        let mean: f64 = alpha.iter().zip(&r).map(|(p, v)| p * v).sum();
        let second_moment = 2.0 * alpha.iter().zip(&r2).map(|(p, v)| p * v).sum::<f64>();
        Ok(PhaseType { alpha, a: flat, exit, mean_residual: r, mean, second_moment, label: format!("PH({m})") })
    }

    /// Exponential law with the given mean (one phase, rate `1/mean`).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] on `model.job_size.mean` when `mean` is not finite or `<= 0`.
    pub fn exponential(mean: f64) -> Result<Self, ModelError> {
        finite_positive("model.job_size.mean", mean)?;
        let mut ph = PhaseType::new(vec![1.0], vec![vec![-1.0 / mean]])?;
        ph.label = format!("Exp(mean {mean})");
        Ok(ph)
    }

    /// H2 law: rate `mu1` with probability `p`, rate `mu2` otherwise, in the Coxian form of the
    /// module docs (the phases are relabelled so that phase 1 has the larger rate).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] on `model.job_size.p` (outside `[0, 1]`),
    /// `model.job_size.mu1` or `model.job_size.mu2` (not finite or `<= 0`).
    pub fn h2(p: f64, mu1: f64, mu2: f64) -> Result<Self, ModelError> {
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return Err(out_of_range("model.job_size.p", p, "a probability in [0, 1]"));
        }
        finite_positive("model.job_size.mu1", mu1)?;
        finite_positive("model.job_size.mu2", mu2)?;
        let (p, fast, slow) = if mu1 >= mu2 { (p, mu1, mu2) } else { (1.0 - p, mu2, mu1) };
        let a = (1.0 - p) * (fast - slow) / fast;
        let mut ph = PhaseType::new(vec![1.0, 0.0], vec![vec![-fast, a * fast], vec![0.0, -slow]])?;
        ph.label = format!("H2(p {p}, mu1 {fast}, mu2 {slow})");
        Ok(ph)
    }

    /// H2 law with the given mean, squared coefficient of variation `scv >= 1` and share `f`
    /// of the load carried by the fast jobs (the thesis parameterisation of the module docs).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] on `model.job_size.mean` (not finite or `<= 0`),
    /// `model.job_size.scv` (below 1: an H2 law has SCV >= 1; or not finite) and
    /// `model.job_size.f` (outside `(0, 1)`).
    pub fn h2_from_moments(mean: f64, scv: f64, f: f64) -> Result<Self, ModelError> {
        let (p, mu1, mu2) = h2_parameters(mean, scv, f)?;
        let mut ph = PhaseType::h2(p, mu1, mu2)?;
        ph.label = format!("H2(mean {mean}, SCV {scv}, f {f})");
        Ok(ph)
    }

    /// Erlang-`k` law with the given mean (`k` phases of rate `k/mean` in series).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] on `model.job_size.k` (0 or above [`MAX_PHASES`]) and
    /// `model.job_size.mean`.
    pub fn erlang(k: usize, mean: f64) -> Result<Self, ModelError> {
        if !(1..=MAX_PHASES).contains(&k) {
            return Err(out_of_range("model.job_size.k", k, "an integer in [1, 16]"));
        }
        finite_positive("model.job_size.mean", mean)?;
        let rate = k as f64 / mean;
        let mut ph = PhaseType::coxian(&vec![rate; k], &vec![1.0; k - 1])?;
        ph.label = format!("Erlang-{k}(mean {mean})");
        Ok(ph)
    }

    /// Coxian law: phase `j` has rate `rates[j]`; on leaving it the job moves to phase `j + 1`
    /// with probability `next[j]` (`next` has `m - 1` entries), else completes.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] on `model.job_size.rates[j]` (not finite or `<= 0`) and
    /// `model.job_size.next[j]` (outside `[0, 1]`, or the wrong length).
    pub fn coxian(rates: &[f64], next: &[f64]) -> Result<Self, ModelError> {
        let m = rates.len();
        if next.len() + 1 != m {
            return Err(out_of_range("model.job_size.next", format!("{} entries", next.len()), "one entry fewer than rates"));
        }
        for (j, &r) in rates.iter().enumerate() {
            finite_positive(&format!("model.job_size.rates[{j}]"), r)?;
        }
        for (j, &q) in next.iter().enumerate() {
            if !(q.is_finite() && (0.0..=1.0).contains(&q)) {
                return Err(out_of_range(&format!("model.job_size.next[{j}]"), q, "a probability in [0, 1]"));
            }
        }
        let mut a = vec![vec![0.0; m]; m];
        for j in 0..m {
            a[j][j] = -rates[j];
            if j + 1 < m {
                a[j][j + 1] = next[j] * rates[j];
            }
        }
        let mut alpha = vec![0.0; m];
        alpha[0] = 1.0;
        let mut ph = PhaseType::new(alpha, a)?;
        ph.label = format!("Coxian-{m}");
        Ok(ph)
    }

    /// Number of phases `m`.
    pub fn phases(&self) -> usize {
        self.alpha.len()
    }

    /// Initial probabilities `alpha` (length `m`).
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// Sub-generator entry `A_{ij}` (0-based phases).
    #[inline]
    pub fn rate(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.phases() + j]
    }

    /// The sub-generator, row-major `m x m`.
    pub fn sub_generator(&self) -> &[f64] {
        &self.a
    }

    /// Exit (completion) rates `nu = -A 1` (length `m`).
    pub fn exit_rates(&self) -> &[f64] {
        &self.exit
    }

    /// Mean residual size from each phase, `(-A)^{-1} 1` (length `m`).
    pub fn mean_residual(&self) -> &[f64] {
        &self.mean_residual
    }

    /// Mean size `E[S]`.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Second moment `E[S^2]`.
    pub fn second_moment(&self) -> f64 {
        self.second_moment
    }

    /// Squared coefficient of variation `E[S^2]/E[S]^2 - 1`.
    pub fn scv(&self) -> f64 {
        self.second_moment / (self.mean * self.mean) - 1.0
    }

    /// Short description, e.g. `H2(mean 1, SCV 9, f 0.5)`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether the law is in the Coxian form under which the staircase order is monotone:
    /// new jobs start in phase 1 (`alpha = e_1`), phase `j` moves only to `j + 1`, and the exit
    /// rates are non-increasing in the phase (Massey's conditions; docs/models/phase-type.md).
    pub fn is_ordered_coxian(&self) -> bool {
        let m = self.phases();
        let starts_low = self.alpha[0] == 1.0;
        let series = (0..m).all(|i| (0..m).all(|j| i == j || j == i + 1 || self.rate(i, j) == 0.0));
        let exits_fall = self.exit.windows(2).all(|w| w[0] >= w[1] * (1.0 - 1e-12));
        starts_low && series && exits_fall
    }

    /// Whether the law is exponential (one phase).
    pub fn is_exponential(&self) -> bool {
        self.phases() == 1
    }

    /// `P(S > w) = alpha exp(A w) 1`, by uniformisation (Poisson-weighted powers of
    /// `P = I + A/q`, `q = max_j |A_jj|`), to about 1e-15 absolute. Allocates (two vectors).
    pub fn ccdf(&self, w: f64) -> f64 {
        if w <= 0.0 {
            return 1.0;
        }
        let m = self.phases();
        let q = (0..m).map(|j| -self.rate(j, j)).fold(0.0, f64::max);
        let qt = q * w;
        // v_n = alpha P^n, term weight e^{-qt} (qt)^n / n!, summed until the Poisson tail is negligible
        let mut v = self.alpha.clone();
        let mut next = vec![0.0; m];
        let mut log_weight = -qt;
        let mut total = 0.0;
        let n_max = (qt + 12.0 * qt.sqrt() + 40.0) as usize;
        for n in 0..=n_max {
            if n > 0 {
                log_weight += qt.ln() - (n as f64).ln();
                for (j, nj) in next.iter_mut().enumerate() {
                    *nj = v[j] + (0..m).map(|i| v[i] * self.rate(i, j)).sum::<f64>() / q;
                }
                std::mem::swap(&mut v, &mut next);
            }
            total += log_weight.exp() * v.iter().sum::<f64>();
        }
        total.clamp(0.0, 1.0)
    }
}

/// `(p, mu1, mu2)` of the H2 law with the given mean, SCV and load share `f` of the fast jobs
/// (module docs; T. Hellemans' thesis parameterisation).
///
/// # Errors
/// [`ModelError::OutOfRange`] on `model.job_size.mean`, `model.job_size.scv` (below 1, or not
/// finite) or `model.job_size.f` (outside `(0, 1)`).
pub fn h2_parameters(mean: f64, scv: f64, f: f64) -> Result<(f64, f64, f64), ModelError> {
    finite_positive("model.job_size.mean", mean)?;
    if !(scv.is_finite() && scv >= 1.0) {
        return Err(out_of_range("model.job_size.scv", scv, "a number >= 1 (an H2 law has SCV >= 1; use erlang for SCV < 1)"));
    }
    if !(f.is_finite() && f > 0.0 && f < 1.0) {
        return Err(out_of_range("model.job_size.f", f, "a number in (0, 1) (share of the load carried by the fast jobs)"));
    }
    let disc = ((scv - 1.0) * (scv - 1.0 + 8.0 * f * (1.0 - f))).max(0.0);
    let mu1 = (scv + 4.0 * f - 1.0 + disc.sqrt()) / (2.0 * f * (scv + 1.0));
    let p = f * mu1;
    let mu2 = (1.0 - p) / (1.0 - f);
    Ok((p, mu1 / mean, mu2 / mean))
}

/// Solves `M x = b` (`M` row-major `n x n`) by Gaussian elimination with partial pivoting;
/// `None` when `M` is singular to working precision.
pub(crate) fn solve_dense(m: &[f64], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let mut a = m.to_vec();
    let mut x = b.to_vec();
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))?;
        if a[p * n + c].abs() <= 1e-14 * scale {
            return None;
        }
        if p != c {
            for k in 0..n {
                a.swap(p * n + k, c * n + k);
            }
            x.swap(p, c);
        }
        for r in c + 1..n {
            let factor = a[r * n + c] / a[c * n + c];
            if factor != 0.0 {
                for k in c..n {
                    a[r * n + k] -= factor * a[c * n + k];
                }
                x[r] -= factor * x[c];
            }
        }
    }
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c * n + k] * x[k]).sum();
        x[c] = (x[c] - s) / a[c * n + c];
    }
    Some(x)
}

fn one() -> f64 {
    1.0
}

/// A job-size law as written in a model file: the `[model.job_size]` table, tagged by `law`.
///
/// ```toml
/// [model.job_size]
/// law = "h2"          # exponential | h2 | erlang | coxian | phase-type
/// mean = 1.0
/// scv = 9.0           # E[S^2] = 10
/// f = 0.5             # share of the load carried by the fast jobs
/// ```
///
/// `h2` takes either `mean`, `scv`, `f` or `p`, `mu1`, `mu2`; `coxian` takes `rates` and
/// `next` (continuation probabilities); `phase-type` takes `alpha` and `a` (rows of the
/// sub-generator). Overrides reach inside: `--set job_size.scv=4`.
///
/// Read like [`ModelSpec`](crate::ModelSpec): the table, then the law from the other keys
/// (through its private twin `JobSizeSpecByLaw`), so that an error names its key (`model.job_size.scv: ...`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "law", rename_all = "kebab-case")]
pub enum JobSizeSpec {
    /// Exponential with the given mean (default 1).
    Exponential {
        /// Mean job size (`> 0`).
        mean: f64,
    },
    /// Two-phase hyperexponential, by `(mean, scv, f)` or by `(p, mu1, mu2)`.
    H2 {
        /// Mean job size (default 1 when `scv` is given).
        #[serde(skip_serializing_if = "Option::is_none")]
        mean: Option<f64>,
        /// Squared coefficient of variation, `>= 1`.
        #[serde(skip_serializing_if = "Option::is_none")]
        scv: Option<f64>,
        /// Share of the load carried by the fast jobs, in `(0, 1)` (default 1/2).
        #[serde(skip_serializing_if = "Option::is_none")]
        f: Option<f64>,
        /// Probability of the rate-`mu1` branch, in `[0, 1]`.
        #[serde(skip_serializing_if = "Option::is_none")]
        p: Option<f64>,
        /// Rate of the first branch, `> 0`.
        #[serde(skip_serializing_if = "Option::is_none")]
        mu1: Option<f64>,
        /// Rate of the second branch, `> 0`.
        #[serde(skip_serializing_if = "Option::is_none")]
        mu2: Option<f64>,
    },
    /// Erlang-`k` with the given mean (default 1).
    Erlang {
        /// Number of phases, in `[1, 16]`.
        k: usize,
        /// Mean job size (`> 0`).
        mean: f64,
    },
    /// Coxian: rates of the phases and continuation probabilities.
    Coxian {
        /// Rate of each phase (`> 0`), `m` entries.
        rates: Vec<f64>,
        /// Probability of moving on from phase `j` to `j + 1`, `m - 1` entries in `[0, 1]`.
        next: Vec<f64>,
    },
    /// General phase-type `(alpha, A)`.
    PhaseType {
        /// Initial probabilities, summing to 1.
        alpha: Vec<f64>,
        /// Sub-generator rows (negative diagonal, non-negative off-diagonal, row sums `<= 0`).
        a: Vec<Vec<f64>>,
    },
}

/// How the laws of [`JobSizeSpec`] are read: its externally tagged twin (see
/// `crate::spec::by_tag`), with the defaults of the optional keys.
#[derive(Deserialize)]
#[serde(remote = "JobSizeSpec", rename_all = "kebab-case", deny_unknown_fields)]
enum JobSizeSpecByLaw {
    Exponential {
        #[serde(default = "one")]
        mean: f64,
    },
    H2 {
        #[serde(default)]
        mean: Option<f64>,
        #[serde(default)]
        scv: Option<f64>,
        #[serde(default)]
        f: Option<f64>,
        #[serde(default)]
        p: Option<f64>,
        #[serde(default)]
        mu1: Option<f64>,
        #[serde(default)]
        mu2: Option<f64>,
    },
    Erlang {
        k: usize,
        #[serde(default = "one")]
        mean: f64,
    },
    Coxian {
        rates: Vec<f64>,
        next: Vec<f64>,
    },
    PhaseType {
        alpha: Vec<f64>,
        a: Vec<Vec<f64>>,
    },
}

impl<'de> Deserialize<'de> for JobSizeSpec {
    /// Reads a `[model.job_size]` table; errors start with the key they are about, relative
    /// to the table (`.scv: ...`), for the enclosing [`ModelSpec`](crate::ModelSpec) to complete.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// `JobSizeSpecByLaw` as a `Deserialize` type (serde's `remote` gives a function).
        struct ByLaw(JobSizeSpec);
        impl<'de> Deserialize<'de> for ByLaw {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                JobSizeSpecByLaw::deserialize(d).map(ByLaw)
            }
        }
        crate::spec::by_tag(deserializer, "", "law", "a [model.job_size] table with a law").map(|ByLaw(j)| j)
    }
}

impl Default for JobSizeSpec {
    fn default() -> Self {
        JobSizeSpec::Exponential { mean: 1.0 }
    }
}

impl JobSizeSpec {
    /// The law in phase-type form (H2 in its Coxian form).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming the `model.job_size.*` field that is out of range, or
    /// `model.job_size` when an H2 law mixes or lacks its two parameter sets.
    pub fn to_phase_type(&self) -> Result<PhaseType, ModelError> {
        match self {
            JobSizeSpec::Exponential { mean } => PhaseType::exponential(*mean),
            JobSizeSpec::H2 { mean, scv, f, p, mu1, mu2 } => match (mean, scv, f, p, mu1, mu2) {
                (_, Some(scv), _, None, None, None) => PhaseType::h2_from_moments(mean.unwrap_or(1.0), *scv, f.unwrap_or(0.5)),
                (None, None, None, Some(p), Some(mu1), Some(mu2)) => PhaseType::h2(*p, *mu1, *mu2),
                _ => Err(out_of_range(
                    "model.job_size",
                    {
                        let keys = [("mean", mean.is_some()), ("scv", scv.is_some()), ("f", f.is_some())];
                        let more = [("p", p.is_some()), ("mu1", mu1.is_some()), ("mu2", mu2.is_some())];
                        let given: Vec<&str> = keys.iter().chain(&more).filter(|(_, g)| *g).map(|(k, _)| *k).collect();
                        format!("an h2 law with keys [{}]", given.join(", "))
                    },
                    "an h2 law with either scv (and optionally mean, f) or all of p, mu1, mu2, not both",
                )),
            },
            JobSizeSpec::Erlang { k, mean } => PhaseType::erlang(*k, *mean),
            JobSizeSpec::Coxian { rates, next } => PhaseType::coxian(rates, next),
            JobSizeSpec::PhaseType { alpha, a } => PhaseType::new(alpha.clone(), a.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f = 1/2: mu_{1,2} = 1 +- sqrt((SCV-1)/(SCV+1)) (Hellemans' thesis formula; docs/models/phase-type.md).
    #[test]
    fn h2_balanced_means_match_the_closed_form() {
        let (p, mu1, mu2) = h2_parameters(1.0, 9.0, 0.5).unwrap();
        let s = (8.0f64 / 10.0).sqrt();
        assert!((mu1 - (1.0 + s)).abs() < 1e-14 && (mu2 - (1.0 - s)).abs() < 1e-14);
        assert!((p - mu1 / 2.0).abs() < 1e-15);
        // the thesis' form of mu2 (f replaced by 1-f, minus sign) gives the same mu2
        for (scv, f) in [(9.0, 0.5), (4.0, 0.3), (20.0, 0.8), (1.5, 0.1)] {
            let (_, _, mu2) = h2_parameters(1.0, scv, f).unwrap();
            let g = 1.0 - f;
            let alt = (scv + 4.0 * g - 1.0 - ((scv - 1.0) * (scv - 1.0 + 8.0 * f * g)).sqrt()) / (2.0 * g * (scv + 1.0));
            assert!((mu2 - alt).abs() < 1e-12, "scv {scv} f {f}: {mu2} vs {alt}");
        }
    }

    #[test]
    fn h2_moments_and_coxian_form() {
        for (mean, scv, f) in [(1.0, 9.0, 0.5), (2.0, 4.0, 0.3), (0.5, 20.0, 0.9), (1.0, 1.0, 0.5)] {
            let ph = PhaseType::h2_from_moments(mean, scv, f).unwrap();
            assert!((ph.mean() - mean).abs() < 1e-12 * mean, "{}", ph.label());
            assert!((ph.scv() - scv).abs() < 1e-9, "{} scv {}", ph.label(), ph.scv());
            assert!(ph.is_ordered_coxian());
            // share of the load carried by the fast branch: (p / mu1) / E[S] = f
            let (p, mu1, _) = h2_parameters(mean, scv, f).unwrap();
            assert!((p / mu1 / mean - f).abs() < 1e-12);
        }
    }

    /// H2 ccdf p e^{-mu1 w} + (1-p) e^{-mu2 w} equals the Coxian alpha e^{Aw} 1.
    #[test]
    fn coxian_form_has_the_h2_ccdf() {
        let (p, mu1, mu2) = (0.3, 2.5, 0.4);
        let ph = PhaseType::h2(p, mu1, mu2).unwrap();
        for w in [0.0, 0.1, 1.0, 3.0, 10.0, 40.0] {
            let exact = p * (-mu1 * w).exp() + (1.0 - p) * (-mu2 * w).exp();
            assert!((ph.ccdf(w) - exact).abs() < 1e-13, "w {w}: {} vs {exact}", ph.ccdf(w));
        }
        // labels given the other way round are relabelled
        assert_eq!(PhaseType::h2(0.7, 0.4, 2.5).unwrap().sub_generator(), ph.sub_generator());
    }

    #[test]
    fn erlang_and_exponential() {
        let e = PhaseType::erlang(4, 2.0).unwrap();
        assert!((e.mean() - 2.0).abs() < 1e-14 && (e.scv() - 0.25).abs() < 1e-12);
        assert!(!e.is_ordered_coxian(), "Erlang exit rates increase with the phase");
        let x = PhaseType::exponential(0.5).unwrap();
        assert!((x.scv() - 1.0).abs() < 1e-12 && x.is_exponential() && x.is_ordered_coxian());
        assert!((x.ccdf(1.0) - (-2.0f64).exp()).abs() < 1e-15);
    }

    #[test]
    fn bad_laws_name_field_value_and_range() {
        let msg = |r: Result<PhaseType, ModelError>| r.unwrap_err().to_string();
        let e = msg(PhaseType::new(vec![1.0, 0.0], vec![vec![-1.0, 2.0], vec![0.0, -1.0]]));
        assert!(e.contains("model.job_size.a[0]") && e.contains("row sum 1") && e.contains("row sums <= 0"), "{e}");
        let e = msg(PhaseType::new(vec![1.0, 0.0], vec![vec![-1.0, -0.5], vec![0.0, -1.0]]));
        assert!(e.contains("model.job_size.a[0][1] = -0.5") && e.contains(">= 0"), "{e}");
        let e = msg(PhaseType::new(vec![0.6, 0.6], vec![vec![-1.0, 0.0], vec![0.0, -1.0]]));
        assert!(e.contains("model.job_size.alpha") && e.contains("summing to 1"), "{e}");
        let e = msg(PhaseType::new(vec![1.0, 0.0], vec![vec![-1.0, 1.0], vec![1.0, -1.0]]));
        assert!(e.contains("nonsingular"), "{e}");
        let e = msg(PhaseType::h2_from_moments(1.0, 0.5, 0.5));
        assert!(e.contains("model.job_size.scv = 0.5") && e.contains(">= 1"), "{e}");
        let e = msg(PhaseType::h2_from_moments(0.0, 9.0, 0.5));
        assert!(e.contains("model.job_size.mean = 0") && e.contains("> 0"), "{e}");
        let e = msg(PhaseType::h2_from_moments(1.0, 9.0, 1.0));
        assert!(e.contains("model.job_size.f = 1"), "{e}");
        let e = msg(PhaseType::h2(0.5, -1.0, 1.0));
        assert!(e.contains("model.job_size.mu1 = -1"), "{e}");
        let e = msg(PhaseType::exponential(-2.0));
        assert!(e.contains("model.job_size.mean = -2"), "{e}");
        let e = msg(PhaseType::coxian(&[1.0, -3.0], &[0.5]));
        assert!(e.contains("model.job_size.rates[1] = -3"), "{e}");
        let e = msg(JobSizeSpec::H2 { mean: None, scv: Some(9.0), f: None, p: Some(0.5), mu1: None, mu2: None }.to_phase_type());
        assert!(e.contains("model.job_size") && e.contains("not both"), "{e}");
    }
}
