//! Stationary distributions of the chain: sparse LU (faer) for moderate sizes, Gauss-Seidel
//! with iterative aggregation-disaggregation for large ones.

use super::chain::Chain;
use faer::linalg::solvers::SolveCore;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Conj, Mat, MatMut};
use mfq_model::{Abandoned, Deadline};

/// Largest number of aggregates of the coarse chain (its generator is solved densely).
const MAX_COARSE: usize = 1500;

/// `||pi Q||_1 / max_i |q_ii|` of a probability vector `pi`, from the rows of `Q`.
pub(crate) fn residual_by_rows(chain: &Chain, pi: &[f64]) -> f64 {
    let mut r = vec![0.0; chain.len()];
    for (i, &p) in pi.iter().enumerate() {
        r[i] -= p * chain.diag[i];
        for e in chain.out_ptr[i]..chain.out_ptr[i + 1] {
            r[chain.out_to[e] as usize] += p * chain.out_rate[e];
        }
    }
    r.iter().map(|v| v.abs()).sum::<f64>() / uniformisation_rate(chain)
}

/// The largest total rate out of a state (`> 0` when the chain has a transition).
pub(crate) fn uniformisation_rate(chain: &Chain) -> f64 {
    chain.diag.iter().fold(0.0f64, |m, &d| m.max(d)).max(f64::MIN_POSITIVE)
}

/// `Q^T` with the equation of state `pin` replaced by `pi_pin = 1`.
fn pinned_matrix(chain: &Chain, pin: usize) -> Result<SparseColMat<usize, f64>, String> {
    let n = chain.len();
    let mut entries = Vec::with_capacity(chain.out_to.len() + n);
    entries.push(Triplet::new(pin, pin, 1.0));
    // column j of Q^T is row j of Q; row `pin` of Q^T is the pinned equation
    for j in 0..n {
        if j != pin {
            entries.push(Triplet::new(j, j, -chain.diag[j]));
        }
        for e in chain.out_ptr[j]..chain.out_ptr[j + 1] {
            let t = chain.out_to[e] as usize;
            if t != pin {
                entries.push(Triplet::new(t, j, chain.out_rate[e]));
            }
        }
    }
    SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &entries).map_err(|e| format!("{e:?}"))
}

/// An upper bound on the entries of the sparse LU's factors of the pinned `Q^T`, from the
/// symbolic analysis alone (the column ordering and the structure of `A^T A`, which bounds
/// `L` and `U` under any row pivoting: George and Ng, SIAM J. Sci. Stat. Comput. 8(6), 1987),
/// the structure faer's supernodal LU allocates: cheap beside the factorisation.
///
/// # Errors
/// The symbolic analysis' failure, as text.
pub(crate) fn lu_fill_bound(chain: &Chain) -> Result<f64, String> {
    use faer::sparse::linalg::qr::{factorize_symbolic_qr, QrSymbolicParams};
    let a = pinned_matrix(chain, 0)?;
    let symbolic = factorize_symbolic_qr(a.symbolic(), QrSymbolicParams::default())
        .map_err(|e| format!("the sparse LU's symbolic analysis failed: {e:?}"))?;
    Ok(symbolic.len_val() as f64)
}

/// Why [`solve_lu_within`] gave no solution.
pub(crate) enum LuFailure {
    /// The deadline passed (or the cancel flag was set) during the factorisation.
    Stopped,
    /// The LU failed or its solution is not finite.
    Failed(String),
}

/// States from which [`solve_lu_within`] factorises on a helper thread that the caller
/// abandons at the deadline (below, a factorisation takes milliseconds).
const THREADED_MIN: usize = 5_000;

/// The stationary distribution by a sparse LU of `Q^T` with the equation of state `pin`
/// replaced by `pi_pin = 1`, then normalised: non-singular iff the chain has one closed class
/// and `pin` is in it (else an error, and the caller iterates). A likely `pin` keeps
/// `pi / pi_pin` within double precision ([`super::guess::likely_state`]). faer's LU cannot
/// be interrupted, so from [`THREADED_MIN`] states it runs on a helper thread by
/// [`Deadline::wait_for`], [`LuFailure::Stopped`] when the deadline passes first.
pub(crate) fn solve_lu_within(chain: &Chain, pin: usize, deadline: &Deadline) -> Result<Vec<f64>, LuFailure> {
    if deadline.expired() {
        return Err(LuFailure::Stopped);
    }
    let n = chain.len();
    let a = pinned_matrix(chain, pin).map_err(LuFailure::Failed)?;
    let solve = move || -> Result<Vec<f64>, String> {
        let lu = a.sp_lu().map_err(|e| format!("sparse LU failed: {e:?}"))?;
        let mut rhs = vec![0.0; n];
        rhs[pin] = 1.0;
        lu.solve_in_place_with_conj(Conj::No, MatMut::from_column_major_slice_mut(&mut rhs, n, 1));
        Ok(rhs)
    };
    let mut rhs = if n < THREADED_MIN {
        solve().map_err(LuFailure::Failed)?
    } else {
        match deadline.wait_for("mfq-exact-lu", solve) {
            Ok(r) => r.map_err(LuFailure::Failed)?,
            Err(Abandoned::Expired) => return Err(LuFailure::Stopped),
            Err(Abandoned::Panicked) => return Err(LuFailure::Failed("the sparse LU's thread stopped (a panic)".into())),
            Err(Abandoned::NoThread) => return Err(LuFailure::Failed("no thread could be started for the sparse LU".into())),
        }
    };
    if rhs.iter().any(|v| !v.is_finite()) {
        return Err(LuFailure::Failed(
            "the sparse LU gave a non-finite solution (the start state is transient, or the chain has several closed classes)".into(),
        ));
    }
    // round-off can leave tiny negative probabilities
    rhs.iter_mut().for_each(|v| *v = v.max(0.0));
    let s: f64 = rhs.iter().sum();
    rhs.iter_mut().for_each(|v| *v /= s);
    Ok(rhs)
}

/// The band of a chain of one state entry: the largest change of the count over its
/// transitions (`None` for a chain of several entries). Its sparse LU stores about
/// `2 band states` entries and costs `O(band^2 states)`.
pub(crate) fn band(chain: &Chain) -> Option<u128> {
    (chain.dim == 1).then(|| {
        (0..chain.len())
            .flat_map(|i| chain.out_to[chain.out_ptr[i]..chain.out_ptr[i + 1]].iter().map(move |&t| (i, t as usize)))
            .map(|(i, t)| chain.keys[t].abs_diff(chain.keys[i]))
            .max()
            .unwrap_or(0)
    })
}

/// Largest `band x states` of a one-entry chain that
/// [`ExactMethod::Auto`](super::ExactMethod::Auto) factors above
/// [`DIRECT_LIMIT`](super::DIRECT_LIMIT) states: the band LU's factors then hold about
/// `2 x 10^7` numbers (160 MB) at most. SIS at N = 100,000 (band 1) is 10^5; a chain whose
/// jumps reach 17 at N = 100,000 is 1.7 x 10^6.
pub(crate) const BAND_COST_LIMIT: u128 = 10_000_000;

/// Whether [`ExactMethod::Auto`](super::ExactMethod::Auto) factors the chain at any size: a
/// chain of one entry whose `band x states` is at most [`BAND_COST_LIMIT`] (a birth-death
/// chain and its like: the sparse LU of a banded matrix costs `O(band^2 states)`).
pub(crate) fn banded(chain: &Chain) -> bool {
    band(chain).is_some_and(|b| b.max(1) * chain.len() as u128 <= BAND_COST_LIMIT)
}

/// The stationary distribution of a chain of one state entry that is **skip-free** in one
/// direction (every transition lowers the count by at most 1, or raises it by at most 1: a
/// birth-death chain, or one with batch arrivals and single departures), by the balance of
/// the flow across each cut between neighbouring counts: with the states ordered so that
/// the skip-free direction is downwards, `pi_{c+1} q(c+1, c) = sum_{j <= c} pi_j q(j, > c)`
/// (all terms positive, so no cancellation), only `j > c - band` contributing. For a
/// birth-death chain this is the product form `pi_{c+1} / pi_c = up(c) / down(c + 1)`. The
/// weights are kept as mantissas with a logarithmic scale per state (rescaled when they leave
/// `[1e-100, 1e100]`), so a law spanning far more than double precision (two modes separated
/// by a barrier of `exp(-N something)`) keeps every mode's mass, where the LU pinned in one
/// mode loses the other's to round-off (Kelly, "Reversibility and Stochastic Networks",
/// 1979, Section 1.3, for the cut equations).
///
/// `Ok(None)` when the chain is not of this kind (several entries, jumps of more than 1 both
/// ways, counts with gaps) or a cut carries no flow (a reducible chain: the LU or the
/// iteration decides). `Err(())` when `deadline` expired (checked every 4,096 cuts).
#[allow(clippy::result_unit_err)]
pub(crate) fn cut_recursion(chain: &Chain, deadline: &Deadline) -> Result<Option<Vec<f64>>, ()> {
    if chain.dim != 1 || chain.len() < 2 {
        return Ok(None);
    }
    let n = chain.len();
    let (lo, hi) = chain.keys.iter().fold((u128::MAX, 0), |(a, b), &k| (a.min(k), b.max(k)));
    if hi - lo + 1 != n as u128 {
        return Ok(None);
    }
    // position of each state in the skip-free order: by count, or by reversed count
    let transitions = || (0..n).flat_map(|i| (chain.out_ptr[i]..chain.out_ptr[i + 1]).map(move |e| (i, e)));
    let down_by_one = transitions().all(|(i, e)| chain.keys[chain.out_to[e] as usize] + 1 >= chain.keys[i]);
    let up_by_one = transitions().all(|(i, e)| chain.keys[chain.out_to[e] as usize] <= chain.keys[i] + 1);
    let position: Vec<usize> = match (down_by_one, up_by_one) {
        (true, _) => chain.keys.iter().map(|&k| (k - lo) as usize).collect(),
        (false, true) => chain.keys.iter().map(|&k| (hi - k) as usize).collect(),
        _ => return Ok(None),
    };
    let mut state = vec![0usize; n];
    position.iter().enumerate().for_each(|(i, &p)| state[p] = i);
    let band = transitions().map(|(i, e)| position[chain.out_to[e] as usize].saturating_sub(position[i])).max().unwrap_or(0);
    // weight of position p: mantissa[p] * exp(shift[p])
    let (mut mantissa, mut shift) = (vec![0.0f64; n], vec![0.0f64; n]);
    mantissa[0] = 1.0;
    for c in 0..n - 1 {
        if c % 4096 == 4095 && deadline.expired() {
            return Err(());
        }
        let from = (c + 1).saturating_sub(band.max(1));
        let mut flux = 0.0;
        for p in from..=c {
            let i = state[p];
            let over: f64 = (chain.out_ptr[i]..chain.out_ptr[i + 1])
                .filter(|&e| position[chain.out_to[e] as usize] > c)
                .map(|e| chain.out_rate[e])
                .sum();
            flux += mantissa[p] * over;
        }
        let i = state[c + 1];
        let down: f64 =
            (chain.out_ptr[i]..chain.out_ptr[i + 1]).filter(|&e| position[chain.out_to[e] as usize] == c).map(|e| chain.out_rate[e]).sum();
        if !(flux > 0.0 && down > 0.0 && flux.is_finite()) {
            return Ok(None);
        }
        mantissa[c + 1] = flux / down;
        shift[c + 1] = shift[c];
        let m = mantissa[c + 1];
        if !(1e-100..=1e100).contains(&m) {
            // rescale the window that later cuts read (the same scale within it)
            let window = (c + 2).saturating_sub(band.max(1))..=c + 1;
            let top = mantissa[window.clone()].iter().fold(0.0f64, |a, &b| a.max(b));
            let s = shift[c + 1];
            for p in window {
                mantissa[p] /= top;
                shift[p] = s + top.ln();
            }
        }
    }
    let log_w: Vec<f64> = mantissa.iter().zip(&shift).map(|(m, s)| m.ln() + s).collect();
    let top = log_w.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let mut pi = vec![0.0; n];
    for (p, &l) in log_w.iter().enumerate() {
        pi[state[p]] = (l - top).exp();
    }
    let total: f64 = pi.iter().sum();
    pi.iter_mut().for_each(|v| *v /= total);
    Ok(Some(pi))
}

/// The transitions into each state (the columns of `Q`), for Gauss-Seidel.
pub(crate) struct Incoming {
    ptr: Vec<usize>,
    from: Vec<u32>,
    rate: Vec<f64>,
    /// The aggregate of each state ([`aggregates`]) and their number.
    group: Vec<u32>,
    groups: usize,
    /// Rates from each state into each other aggregate, merged: state `flow_from[e]` to
    /// aggregate `flow_to[e]` at rate `flow_rate[e]` (about two entries per state when the
    /// aggregates are the total jobs), so the coarse chain costs a pass over states, not over
    /// transitions.
    flow_from: Vec<u32>,
    flow_to: Vec<u32>,
    flow_rate: Vec<f64>,
}

impl Incoming {
    /// Transposes the rows of `chain` (and frees them).
    pub(crate) fn take(chain: &mut Chain) -> Incoming {
        let n = chain.len();
        let (group, groups) = aggregates(chain);
        let (mut flow_from, mut flow_to, mut flow_rate) = (Vec::new(), Vec::new(), Vec::new());
        let mut local: Vec<(u32, f64)> = Vec::new();
        for i in 0..n {
            local.clear();
            for e in chain.out_ptr[i]..chain.out_ptr[i + 1] {
                let h = group[chain.out_to[e] as usize];
                if h != group[i] {
                    match local.iter_mut().find(|(g, _)| *g == h) {
                        Some(entry) => entry.1 += chain.out_rate[e],
                        None => local.push((h, chain.out_rate[e])),
                    }
                }
            }
            for &(h, r) in &local {
                flow_from.push(i as u32);
                flow_to.push(h);
                flow_rate.push(r);
            }
        }
        let mut ptr = vec![0usize; n + 1];
        for &t in &chain.out_to {
            ptr[t as usize + 1] += 1;
        }
        for j in 0..n {
            ptr[j + 1] += ptr[j];
        }
        let mut fill = ptr.clone();
        let mut from = vec![0u32; chain.out_to.len()];
        let mut rate = vec![0.0; chain.out_to.len()];
        for i in 0..n {
            for e in chain.out_ptr[i]..chain.out_ptr[i + 1] {
                let t = chain.out_to[e] as usize;
                from[fill[t]] = i as u32;
                rate[fill[t]] = chain.out_rate[e];
                fill[t] += 1;
            }
        }
        chain.out_ptr = Vec::new();
        chain.out_to = Vec::new();
        chain.out_rate = Vec::new();
        Incoming { ptr, from, rate, group, groups, flow_from, flow_to, flow_rate }
    }

    /// `sum_i pi_i q_ij` over the transitions into `j`.
    #[inline]
    fn inflow(&self, j: usize, pi: &[f64]) -> f64 {
        let mut s = 0.0;
        for e in self.ptr[j]..self.ptr[j + 1] {
            s += pi[self.from[e] as usize] * self.rate[e];
        }
        s
    }
}

/// How the iteration ended.
pub(crate) struct Iterated {
    pub pi: Vec<f64>,
    pub iterations: usize,
    pub residual: f64,
    pub converged: bool,
    pub timed_out: bool,
}

/// Aggregates: states grouped by the sum of their counts (total jobs for tail-form states),
/// consecutive sums merged when there are more than [`MAX_COARSE`].
fn aggregates(chain: &Chain) -> (Vec<u32>, usize) {
    let levels: Vec<usize> = (0..chain.len()).map(|i| chain.level(i)).collect();
    let (lo, hi) = levels.iter().fold((usize::MAX, 0), |(a, b), &l| (a.min(l), b.max(l)));
    let span = hi - lo + 1;
    let width = span.div_ceil(MAX_COARSE);
    let groups = span.div_ceil(width);
    (levels.iter().map(|&l| ((l - lo) / width) as u32).collect(), groups)
}

/// The stationary distribution by Gauss-Seidel (a forward and a backward sweep per iteration)
/// with iterative aggregation-disaggregation (Takahashi; Koury, McAllister and Stewart, SIAM
/// J. Algebraic Discrete Methods 5(2), 1984) over the aggregates of [`aggregates`]: each
/// iteration solves the coarse chain of the aggregates exactly (dense LU) and rescales `pi`
/// within each aggregate to its coarse probability, then smooths with Gauss-Seidel. The
/// iteration `pi -> G(pi)` is accelerated by Anderson mixing of depth [`DEPTH`] (Walker and Ni,
/// "Anderson acceleration for fixed-point iterations", SIAM J. Numer. Anal. 49(4), 2011), reset
/// when the residual grows. Stops when `||pi Q||_1 / max |q_ii| < tol`.
pub(crate) fn solve_iterative(
    chain: &Chain,
    inc: &Incoming,
    start: Vec<f64>,
    tol: f64,
    max_iterations: usize,
    deadline: &Deadline,
) -> Iterated {
    let n = chain.len();
    let (group, g) = (&inc.group, inc.groups);
    let lambda = uniformisation_rate(chain);
    let mut pi = start;
    let mut next = vec![0.0; n];
    let mut coarse = vec![0.0; g * g];
    let mut mass = vec![0.0; g];
    let mut anderson = Anderson::new(n);
    let (mut residual, mut best) = (f64::INFINITY, f64::INFINITY);
    for it in 0..=max_iterations {
        residual = aggregate_pass(chain, inc, &pi, &mut coarse, &mut mass) / lambda;
        if residual < tol {
            return Iterated { pi, iterations: it, residual, converged: true, timed_out: false };
        }
        if it == max_iterations || deadline.expired() || residual.is_nan() {
            return Iterated { pi, iterations: it, residual, converged: false, timed_out: it < max_iterations };
        }
        if residual > 10.0 * best {
            anderson.reset();
        }
        best = best.min(residual);
        next.copy_from_slice(&pi);
        if g > 1 {
            if let Some(mut z) = coarse_solution(&mut coarse, &mass, g) {
                // the dense solve is accurate to round-off of the largest z only: aggregates of
                // negligible probability keep their values (the sweeps fix them)
                let top = z.iter().fold(0.0f64, |a, &b| a.max(b));
                for (zh, m) in z.iter_mut().zip(&mass) {
                    *zh = if *m > 0.0 && *zh > 1e-10 * top && (*zh / *m).is_finite() { *zh / *m } else { 1.0 };
                }
                for (p, &h) in next.iter_mut().zip(group) {
                    *p *= z[h as usize];
                }
            }
        }
        if !sweeps(chain, inc, &mut next, deadline) {
            return Iterated { pi, iterations: it, residual, converged: false, timed_out: true };
        }
        normalise(&mut next);
        anderson.step(&mut pi, &next);
        normalise(&mut pi);
    }
    Iterated { pi, iterations: max_iterations, residual, converged: false, timed_out: false }
}

/// States between two looks at the clock inside a sweep.
const CLOCK_EVERY: usize = 1 << 16;

/// A forward and a backward Gauss-Seidel sweep of `pi Q = 0` over `v`, in place; `false` when
/// `deadline` expired on the way (`v` is then half-swept).
fn sweeps(chain: &Chain, inc: &Incoming, v: &mut [f64], deadline: &Deadline) -> bool {
    let n = chain.len();
    for (m, j) in (0..n).chain((0..n).rev()).enumerate() {
        if m % CLOCK_EVERY == CLOCK_EVERY - 1 && deadline.expired() {
            return false;
        }
        let d = chain.diag[j];
        if d > 0.0 {
            v[j] = inc.inflow(j, v) / d;
        }
    }
    true
}

/// Scales `v` to sum 1 after clamping negative entries (an extrapolation can make some) to 0.
fn normalise(v: &mut [f64]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
    let s: f64 = v.iter().sum();
    v.iter_mut().for_each(|x| *x /= s);
}

/// One pass over the columns of `Q`: returns `||pi Q||_1` and fills the flows between
/// aggregates (`coarse[G][H] = sum_{i in G, j in H} pi_i q_ij`, `G != H`) and their masses.
fn aggregate_pass(chain: &Chain, inc: &Incoming, pi: &[f64], coarse: &mut [f64], mass: &mut [f64]) -> f64 {
    let g = inc.groups;
    coarse.iter_mut().for_each(|v| *v = 0.0);
    mass.iter_mut().for_each(|v| *v = 0.0);
    let mut r = 0.0;
    for (j, (&p, &h)) in pi.iter().zip(&inc.group).enumerate() {
        r += (inc.inflow(j, pi) - p * chain.diag[j]).abs();
        mass[h as usize] += p;
    }
    for ((&i, &h), &rate) in inc.flow_from.iter().zip(&inc.flow_to).zip(&inc.flow_rate) {
        let i = i as usize;
        coarse[inc.group[i] as usize * g + h as usize] += pi[i] * rate;
    }
    r
}

/// Depth of the Anderson mixing (vectors kept: `2 DEPTH + 2` of the chain's size).
const DEPTH: usize = 5;

/// Anderson mixing (type II) of the iteration `x -> G(x)`: the next iterate is
/// `G(x_k) - sum_j gamma_j (G(x_{j+1}) - G(x_j))` with `gamma` minimising
/// `|f_k - sum_j gamma_j (f_{j+1} - f_j)|_2`, `f = G(x) - x`, over the last [`DEPTH`] steps.
struct Anderson {
    df: Vec<Vec<f64>>,
    dg: Vec<Vec<f64>>,
    gram: [[f64; DEPTH]; DEPTH],
    count: usize,
    slot: usize,
    f_prev: Vec<f64>,
    g_prev: Vec<f64>,
    started: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Entries per block of the fused passes of [`Anderson::step`] (the block of each vector stays
/// in cache while the others are read).
const BLOCK: usize = 2048;

impl Anderson {
    fn new(n: usize) -> Self {
        Anderson {
            df: vec![vec![0.0; n]; DEPTH],
            dg: vec![vec![0.0; n]; DEPTH],
            gram: [[0.0; DEPTH]; DEPTH],
            count: 0,
            slot: 0,
            f_prev: vec![0.0; n],
            g_prev: vec![0.0; n],
            started: false,
        }
    }

    fn reset(&mut self) {
        self.count = 0;
        self.started = false;
    }

    /// Replaces `x` (the iterate `x_k`) by the next one, given `g = G(x_k)`: one pass for the
    /// differences, one for the new Gram row and the right-hand side, one for the update.
    fn step(&mut self, x: &mut [f64], g: &[f64]) {
        let s = self.slot;
        let fresh = self.started;
        if fresh {
            let (df, dg) = (&mut self.df[s], &mut self.dg[s]);
            for t in 0..x.len() {
                let f = g[t] - x[t];
                df[t] = f - self.f_prev[t];
                dg[t] = g[t] - self.g_prev[t];
                self.f_prev[t] = f;
            }
            self.count = (self.count + 1).min(DEPTH);
            self.slot = (s + 1) % DEPTH;
        } else {
            self.f_prev.iter_mut().zip(g.iter().zip(x.iter())).for_each(|(f, (g, x))| *f = g - x);
        }
        self.started = true;
        self.g_prev.copy_from_slice(g);
        let m = self.count;
        if m == 0 {
            x.copy_from_slice(g);
            return;
        }
        // the new Gram row (df_s . df_j) and b_j = df_j . f, block by block
        let (mut row, mut b) = ([0.0; DEPTH], [0.0; DEPTH]);
        for start in (0..x.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(x.len());
            let (ds, f) = (&self.df[s][start..end], &self.f_prev[start..end]);
            for j in 0..m {
                let dj = &self.df[j][start..end];
                row[j] += dot(ds, dj);
                b[j] += dot(dj, f);
            }
        }
        for (j, &v) in row.iter().enumerate().take(m) {
            self.gram[s][j] = v;
            self.gram[j][s] = v;
        }
        let trace: f64 = (0..m).map(|j| self.gram[j][j]).sum();
        let a = Mat::<f64>::from_fn(m, m, |r, c| self.gram[r][c] + if r == c { 1e-12 * trace } else { 0.0 });
        let mut gamma = b[..m].to_vec();
        a.partial_piv_lu().solve_in_place_with_conj(Conj::No, MatMut::from_column_major_slice_mut(&mut gamma, m, 1));
        x.copy_from_slice(g);
        if !gamma.iter().all(|v| v.is_finite()) {
            return;
        }
        let mut mass = 0.0;
        for start in (0..x.len()).step_by(BLOCK) {
            let end = (start + BLOCK).min(x.len());
            let xs = &mut x[start..end];
            for (j, gj) in gamma.iter().enumerate() {
                xs.iter_mut().zip(&self.dg[j][start..end]).for_each(|(x, d)| *x -= gj * d);
            }
            mass += xs.iter().map(|v| v.max(0.0)).sum::<f64>();
        }
        // an extrapolation that overflows, or leaves no positive mass, is dropped
        if !(mass.is_finite() && mass > 0.0) {
            x.copy_from_slice(g);
            self.reset();
        }
    }
}

/// The stationary distribution `z` of the coarse chain whose flows `coarse[G][H] = sum_{i in
/// G, j in H} pi_i q_ij` (`G != H`) and masses `mass[G]` are given; `None` if it is singular.
fn coarse_solution(coarse: &mut [f64], mass: &[f64], g: usize) -> Option<Vec<f64>> {
    for a in 0..g {
        let m = mass[a].max(f64::MIN_POSITIVE);
        let mut out = 0.0;
        for b in 0..g {
            coarse[a * g + b] /= m;
            out += coarse[a * g + b];
        }
        coarse[a * g + a] = -out;
    }
    // z C = 0 with sum z = 1: C^T z = e_last with the last equation replaced by the sum
    let a = Mat::<f64>::from_fn(g, g, |r, c| if r == g - 1 { 1.0 } else { coarse[c * g + r] });
    let lu = a.partial_piv_lu();
    let mut z = vec![0.0; g];
    z[g - 1] = 1.0;
    lu.solve_in_place_with_conj(Conj::No, MatMut::from_column_major_slice_mut(&mut z, g, 1));
    if z.iter().any(|v| !v.is_finite()) {
        return None;
    }
    z.iter_mut().for_each(|v| *v = v.max(0.0));
    let s: f64 = z.iter().sum();
    (s > 0.0).then(|| z.into_iter().map(|v| v / s).collect())
}
