//! Exponential Radau collocation with step doubling for the LL(d) ODE in `w`
//! (docs/models/lld.md, "Numerics").
//!
//! The ODE `xi' = A xi + s 1`, `s = 1 - Fbar^d`, `Fbar = rho - lambda alpha xi`, has a stiff
//! linear part (`A`, rates up to `1/f` for H2 sizes with a small load share `f` of the fast
//! jobs) and a scalar nonlinearity. Over a step `delta` the variation-of-constants formula
//! `xi(t) = e^{A t} xi_0 + int_0^t e^{A(t-v)} 1 s(v) dv` is exact; `s` is replaced by its
//! interpolant at the `Q = 4` Radau IIA nodes `c_j delta` (collocation: order `2Q - 1 = 7` at
//! the step's end, the linear part integrated exactly), which leaves `Q` scalar
//! unknowns `Fbar(c_j delta)`, found by Newton. The integrals `e^{A t}` and
//! `int_0^t e^{A(t-v)} 1 v^k / k! dv` are blocks of one matrix exponential of an augmented
//! matrix (C. Van Loan, "Computing integrals involving the matrix exponential", IEEE Trans.
//! Automatic Control 23(3), 1978), computed by scaling and squaring with a Taylor polynomial,
//! squared in the form `e^X - I` so that slow rates keep their relative accuracy next to fast
//! ones (squaring `e^X` itself loses `2^s` ulps of `1 - e^{-slow t}`).
//! Step sizes are `h / 2^l` (`h` the output grid step), chosen per step by step doubling (one
//! step against two half steps; the two half steps are kept).

use super::NB;

/// Collocation nodes.
pub(super) const Q: usize = 4;

/// Right Gauss-Radau nodes on `[0, 1]` (the Radau IIA nodes, E. Hairer and G. Wanner, Solving
/// Ordinary Differential Equations II, Section IV.5: the roots of `P_4(2c - 1) - P_3(2c - 1)`).
/// The last node is the step's end, so stiff components see the collocated value there, not
/// an extrapolation (stiff accuracy).
const NODES: [f64; Q] = [0.088_587_959_512_704_04, 0.409_466_864_440_734_6, 0.787_659_461_760_847_1, 1.0];
/// Their quadrature weights on `[0, 1]` (exact for degree 6).
const WEIGHTS: [f64; Q] = [0.220_462_211_176_767_95, 0.388_193_468_843_172_7, 0.328_844_319_980_059_03, 0.0625];

/// Deepest step level: steps down to `h / 2^MAX_LEVEL`.
pub(super) const MAX_LEVEL: u32 = 60;

/// The problem: `lambda alpha` (first `m` entries), `A` (row-major `m x m`), `rho`, `d`.
pub(super) struct Problem<'a> {
    pub m: usize,
    pub a: &'a [f64],
    pub lam_alpha: &'a [f64],
    pub rho: f64,
    pub d: i32,
    /// `|lambda alpha (-B)^{-1}|` entrywise (`B` as in `decay_rate`): how much a change of `xi`
    /// moves the later integral of `Fbar` (its linear response, integrated).
    pub sens: &'a [f64],
}

/// Precomputed matrices of one step size `delta`.
pub(super) struct Level {
    delta: f64,
    /// `lambda alpha e^{A c_j delta}` for the nodes.
    r: [[f64; NB]; Q],
    /// `K[j][i] = lambda alpha W_{j,i}`.
    k: [[f64; Q]; Q],
    /// `e^{A delta}` (row-major `m x m`).
    e_end: Vec<f64>,
    /// `W_{end,i}`: the weight vector of the node value `s_i` in `xi(delta)`.
    w_end: [[f64; NB]; Q],
}

/// What one step produced.
#[derive(Clone, Copy)]
pub(super) struct StepOut {
    pub xi: [f64; NB],
    /// `int Fbar^d` and `int Fbar` over the step (Radau quadrature on the nodes).
    pub wait: f64,
    pub work: f64,
}

impl Problem<'_> {
    /// `Fbar = rho - lambda alpha xi`.
    #[inline]
    pub fn fbar(&self, xi: &[f64]) -> f64 {
        self.rho - self.lam_alpha[..self.m].iter().zip(xi).map(|(a, x)| a * x).sum::<f64>()
    }

    /// The matrices of step size `delta`.
    pub fn level(&self, delta: f64) -> Level {
        let m = self.m;
        let vinv = vandermonde_inverse();
        let mut lv = Level { delta, r: [[0.0; NB]; Q], k: [[0.0; Q]; Q], e_end: vec![0.0; m * m], w_end: [[0.0; NB]; Q] };
        for j in 0..=Q {
            let c = if j < Q { NODES[j] } else { 1.0 };
            let (e, y) = phi_blocks(self.a, m, c * delta);
            // W_{j,i} = sum_k Y_k k! delta^{-k} Vinv[k][i]
            let mut w = [[0.0; NB]; Q];
            for (i, wi) in w.iter_mut().enumerate() {
                let mut fact = 1.0;
                for k in 0..Q {
                    if k > 0 {
                        fact *= k as f64 / delta;
                    }
                    let coef = fact * vinv[k][i];
                    for p in 0..m {
                        wi[p] += coef * y[p * Q + k];
                    }
                }
            }
            if j < Q {
                for l in 0..m {
                    lv.r[j][l] = (0..m).map(|p| self.lam_alpha[p] * e[p * m + l]).sum();
                }
                for i in 0..Q {
                    lv.k[j][i] = (0..m).map(|p| self.lam_alpha[p] * w[i][p]).sum();
                }
            } else {
                lv.e_end = e;
                lv.w_end = w;
            }
        }
        lv
    }

    /// One collocation step of `lv` from `xi`; `None` when Newton does not converge.
    pub fn step(&self, lv: &Level, xi: &[f64; NB]) -> Option<StepOut> {
        let (m, d) = (self.m, self.d);
        let g: [f64; Q] = std::array::from_fn(|j| self.rho - lv.r[j][..m].iter().zip(xi).map(|(a, b)| a * b).sum::<f64>());
        let s0 = 1.0 - self.fbar(&xi[..m]).powi(d);
        let mut f: [f64; Q] = std::array::from_fn(|j| (g[j] - lv.k[j].iter().sum::<f64>() * s0).clamp(0.0, 1.0));
        let mut converged = false;
        let mut prev = f64::INFINITY;
        for _ in 0..60 {
            let mut jac = [[0.0; Q]; Q];
            let mut res = [0.0; Q];
            for j in 0..Q {
                res[j] = f[j] - g[j];
                for i in 0..Q {
                    res[j] += lv.k[j][i] * (1.0 - f[i].powi(d));
                    jac[j][i] = -lv.k[j][i] * d as f64 * f[i].powi(d - 1);
                }
                jac[j][j] += 1.0;
            }
            let dx = solve4(jac, res)?;
            let mut big = 0.0f64;
            for j in 0..Q {
                f[j] = (f[j] - dx[j]).clamp(0.0, 1.0);
                big = big.max(dx[j].abs());
            }
            // converged, or stalled at the rounding level
            if big <= 1e-15 || (big < 1e-12 && big >= 0.5 * prev) {
                converged = true;
                break;
            }
            prev = big;
        }
        if !converged || f.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let s: [f64; Q] = std::array::from_fn(|i| 1.0 - f[i].powi(d));
        let mut out = [0.0; NB];
        for p in 0..m {
            let mut v = lv.e_end[p * m..(p + 1) * m].iter().zip(xi).map(|(a, b)| a * b).sum::<f64>();
            for i in 0..Q {
                v += lv.w_end[i][p] * s[i];
            }
            out[p] = v;
        }
        let wait = lv.delta * (0..Q).map(|i| WEIGHTS[i] * f[i].powi(d)).sum::<f64>();
        let work = lv.delta * (0..Q).map(|i| WEIGHTS[i] * f[i]).sum::<f64>();
        Some(StepOut { xi: out, wait, work })
    }
}

/// Step sizes `h / 2^l` of one grid, built when first needed.
pub(super) struct Levels {
    h: f64,
    cache: Vec<Option<Level>>,
}

impl Levels {
    pub fn new(h: f64) -> Self {
        Levels { h, cache: (0..=MAX_LEVEL).map(|_| None).collect() }
    }
    pub fn get(&mut self, p: &Problem, l: u32) -> &Level {
        let h = self.h;
        self.cache[l as usize].get_or_insert_with(|| p.level(h / f64::powi(2.0, l as i32)))
    }
}

/// Sums over one grid step: the integrals, their estimated local errors, and the error of `Fbar`
/// weighted by its effect on the later waiting-time integral.
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct Sums {
    pub wait: f64,
    pub work: f64,
    pub wait_err: f64,
    pub work_err: f64,
    /// `sum sens |delta xi| d Fbar^(d-1)` (waiting-time error) and `sum sens |delta xi|`
    /// (workload error): the step-doubling differences of the state carried to the later
    /// integrals by their linear response.
    pub f_err_wait: f64,
    pub f_err_work: f64,
    pub steps: usize,
}

/// Why [`grid_step`] stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Failure {
    /// `stop` said so (deadline or cancellation).
    Stopped,
    /// Newton did not converge even at the deepest level.
    NoConvergence,
}

/// Absolute tolerance per step on `|delta Fbar| + |delta int Fbar^d| + |delta int Fbar|`.
const ATOL: f64 = 1e-14;

/// Integrates one grid step `h` from `xi` (adaptive levels `>= lmin`, starting at `*hint`).
/// `stop` is polled every 64 steps.
pub(super) fn grid_step(
    p: &Problem,
    levels: &mut Levels,
    lmin: u32,
    hint: &mut u32,
    xi: &mut [f64; NB],
    sums: &mut Sums,
    stop: &dyn Fn() -> bool,
) -> Result<(), Failure> {
    let end: u64 = 1 << MAX_LEVEL;
    let mut pos: u64 = 0;
    let mut l = (*hint).clamp(lmin, MAX_LEVEL - 1);
    let mut tries = 0usize;
    while pos < end {
        tries += 1;
        if tries % 64 == 0 && stop() {
            return Err(Failure::Stopped);
        }
        let big = p.step(levels.get(p, l), xi);
        let half = levels.get(p, l + 1);
        let one = p.step(half, xi);
        let two = one.and_then(|o| p.step(half, &o.xi).map(|t| (o, t)));
        let (Some((o, t)), big) = (two, big) else {
            if l + 1 < MAX_LEVEL {
                l += 1;
                continue;
            }
            return Err(Failure::NoConvergence);
        };
        let (wait, work) = (o.wait + t.wait, o.work + t.work);
        let f_two = p.fbar(&t.xi[..p.m]);
        let (df, dwait, dwork, dxi) = match big {
            Some(b) => (
                (p.fbar(&b.xi[..p.m]) - f_two).abs(),
                (b.wait - wait).abs(),
                (b.work - work).abs(),
                (0..p.m).map(|j| p.sens[j] * (b.xi[j] - t.xi[j]).abs()).sum::<f64>(),
            ),
            None => (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY),
        };
        let err = df + dwait + dwork;
        if err <= ATOL || l + 1 >= MAX_LEVEL {
            *xi = t.xi;
            sums.wait += wait;
            sums.work += work;
            sums.wait_err += dwait;
            sums.work_err += dwork;
            sums.f_err_wait += dxi * p.d as f64 * f_two.max(0.0).powi(p.d - 1);
            sums.f_err_work += dxi;
            sums.steps += 1;
            pos += 1u64 << (MAX_LEVEL - l);
            // order 7: a doubled step has about 2^8 times the error
            if err < ATOL / 256.0 && l > lmin && pos % (1u64 << (MAX_LEVEL - l + 1)) == 0 {
                l -= 1;
            }
        } else {
            l += 1;
        }
    }
    *hint = l;
    Ok(())
}

/// `(e^{A t}, Y)` with `Y[p * Q + k] = (int_0^t e^{A(t-v)} 1 v^k / k! dv)_p` (`A` row-major
/// `m x m`), from the exponential of the augmented matrix `t [[A, 1 e_1^T], [0, J]]` (`J`
/// the `Q x Q` shift) (Van Loan 1978).
fn phi_blocks(a: &[f64], m: usize, t: f64) -> (Vec<f64>, Vec<f64>) {
    let n = m + Q;
    let mut big = vec![0.0; n * n];
    for i in 0..m {
        for j in 0..m {
            big[i * n + j] = a[i * m + j] * t;
        }
        big[i * n + m] = t;
    }
    for k in 0..Q - 1 {
        big[(m + k) * n + m + k + 1] = t;
    }
    let ex = expm(&big, n);
    let e = (0..m * m).map(|idx| ex[(idx / m) * n + idx % m]).collect();
    let y = (0..m * Q).map(|idx| ex[(idx / Q) * n + m + idx % Q]).collect();
    (e, y)
}

/// Matrix exponential of the row-major `n x n` matrix `x` by scaling and squaring with a
/// Taylor polynomial of degree 18 on a matrix of 1-norm `<= 1/2` (truncation error below
/// `0.5^19 / 19!`, far below the rounding error). The squarings work on `N = e^X - I`
/// (`N <- 2 N + N^2`), which keeps the relative accuracy of entries near the identity (N. J.
/// Higham, Functions of Matrices, SIAM 2008, Section 10.3: the loss of slow decay rates in
/// the squaring phase).
pub(super) fn expm(x: &[f64], n: usize) -> Vec<f64> {
    let norm = (0..n).map(|j| (0..n).map(|i| x[i * n + j].abs()).sum::<f64>()).fold(0.0, f64::max);
    let s = if norm > 0.5 { (norm / 0.5).log2().ceil() as i32 } else { 0 };
    let scale = f64::powi(2.0, -s);
    let xs: Vec<f64> = x.iter().map(|v| v * scale).collect();
    let ident = |i: usize| if i / n == i % n { 1.0 } else { 0.0 };
    // Horner: P = I + X/k P, k = 18..2; N = X P = e^X - I
    let mut p: Vec<f64> = (0..n * n).map(ident).collect();
    let mut tmp = vec![0.0; n * n];
    for k in (2..=18).rev() {
        matmul(&xs, &p, &mut tmp, n);
        for (i, (pv, tv)) in p.iter_mut().zip(&tmp).enumerate() {
            *pv = ident(i) + tv / k as f64;
        }
    }
    let mut nm = vec![0.0; n * n];
    matmul(&xs, &p, &mut nm, n);
    for _ in 0..s {
        matmul(&nm, &nm, &mut tmp, n);
        for (v, t) in nm.iter_mut().zip(&tmp) {
            *v = 2.0 * *v + t;
        }
    }
    for i in 0..n {
        nm[i * n + i] += 1.0;
    }
    nm
}

fn matmul(a: &[f64], b: &[f64], out: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..n {
            out[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
}

/// Inverse of the Vandermonde matrix `V[i][k] = c_i^k` of the nodes: row `k` maps node values
/// to the coefficient of `(v / delta)^k` of the interpolant.
fn vandermonde_inverse() -> [[f64; Q]; Q] {
    let mut inv = [[0.0; Q]; Q];
    for i in 0..Q {
        // column i: the coefficients of the Lagrange polynomial L_i
        let mut coef = [0.0; Q];
        coef[0] = 1.0;
        let mut denom = 1.0;
        let mut deg = 0;
        for (j, &cj) in NODES.iter().enumerate() {
            if j == i {
                continue;
            }
            // coef *= (v - c_j)
            for k in (0..=deg + 1).rev() {
                let lower = if k > 0 { coef[k - 1] } else { 0.0 };
                coef[k] = lower - cj * coef[k];
            }
            deg += 1;
            denom *= NODES[i] - cj;
        }
        for k in 0..Q {
            inv[k][i] = coef[k] / denom;
        }
    }
    inv
}

/// Solves the `Q x Q` system `a x = b` by Gaussian elimination with partial pivoting.
fn solve4(mut a: [[f64; Q]; Q], mut b: [f64; Q]) -> Option<[f64; Q]> {
    for c in 0..Q {
        let p = (c..Q).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-300 || !a[p][c].is_finite() {
            return None;
        }
        a.swap(p, c);
        b.swap(p, c);
        for r in c + 1..Q {
            let f = a[r][c] / a[c][c];
            for k in c..Q {
                a[r][k] -= f * a[c][k];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0; Q];
    for c in (0..Q).rev() {
        x[c] = (b[c] - (c + 1..Q).map(|k| a[c][k] * x[k]).sum::<f64>()) / a[c][c];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `e^{A t}` of a 2x2 triangular matrix (closed form) and the phi blocks of a scalar
    /// (`int_0^t e^{-mu(t-v)} v^k/k! dv` by the recursion `I_k = (t^k/k! - I_{k-1}) / mu`).
    #[test]
    fn exponential_blocks_match_closed_forms() {
        let (a, b, c) = (-3.0, 2.0, -0.5);
        let t = 1.7;
        let e = expm(&[a * t, b * t, 0.0, c * t], 2);
        let off = b * ((a * t).exp() - (c * t).exp()) / (a - c);
        assert!((e[0] - (a * t).exp()).abs() < 1e-15 && (e[3] - (c * t).exp()).abs() < 1e-15);
        assert!((e[1] - off).abs() < 1e-15 && e[2] == 0.0, "{e:?}");
        for mu in [0.3, 1e6] {
            let (e, y) = phi_blocks(&[-mu], 1, t);
            assert!((e[0] - (-mu * t).exp()).abs() < 1e-15);
            let mut prev = (1.0 - (-mu * t).exp()) / mu;
            assert!((y[0] - prev).abs() < 1e-14 * prev);
            let mut fact = 1.0;
            for k in 1..Q {
                fact *= k as f64;
                let ik = (t.powi(k as i32) / fact - prev) / mu;
                assert!((y[k] - ik).abs() < 1e-12 * ik, "k {k} mu {mu}: {} vs {ik}", y[k]);
                prev = ik;
            }
        }
    }

    /// Rates `8e8` and `0.2` in one matrix: the slow decay keeps its relative accuracy.
    #[test]
    fn slow_rates_survive_the_squaring() {
        let (fast, slow, t) = (8e8, 0.2, 0.05);
        let e = expm(&[-fast * t, 0.2 * fast * t, 0.0, -slow * t], 2);
        let want = (-slow * t).exp();
        assert!((e[3] - want).abs() < 1e-15 * want, "{} vs {want}", e[3]);
        let off = 0.2 * fast * ((-slow * t).exp() - (-fast * t).exp()) / (fast - slow);
        assert!((e[1] - off).abs() < 1e-15 * off, "{} vs {off}", e[1]);
    }

    #[test]
    fn vandermonde_inverse_inverts() {
        let inv = vandermonde_inverse();
        for i in 0..Q {
            for j in 0..Q {
                let v: f64 = (0..Q).map(|k| NODES[i].powi(k as i32) * inv[k][j]).sum();
                assert!((v - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
    }
}
