//! LU factorisation of shifted Jacobians `alpha I + beta J`, banded or dense.
//!
//! Both the stiff integrator (`I - gamma h J`) and the fixed-point solver (`I/dt - J`) solve
//! with a shifted Jacobian. For a banded `J` (lower `p`, upper `q` diagonals) Gaussian
//! elimination with partial pivoting stays inside a band of width `2p + q + 1` (Golub and Van
//! Loan, "Matrix Computations", 4th ed., Alg. 4.3.5 with pivoting, §4.3.5): `O(n p (p + q))`
//! flops and `O(n (2p + q + 1))` memory. A dense `J` uses nalgebra's LU with partial pivoting.
//!
//! A general sparse `J` ([`Sparsity::Sparse`]) uses faer's sparse LU (COLAMD ordering,
//! supernodal/simplicial with partial pivoting); the symbolic analysis is done once, at the
//! first factorisation (where [`ShiftedLu::factor_within`] can give up on it), and reused.
//! When the pattern carries a coupling `J = A + B D^{-1} C` (auxiliary quantities of pair/triplet approximations), the solve goes
//! through the bordered matrix of size `n + r`
//!
//! ```text
//! [ alpha I + beta A   beta B ] [y]   [b]
//! [        C             -D   ] [z] = [0]
//! ```
//!
//! whose first block row is `(alpha I + beta (A + B D^{-1} C)) y = b` after eliminating
//! `z = D^{-1} C y`: memory and work grow with the non-zeros of `A, B, C, D`, never with `n^2`.
//! When the coupling rank `r` is small (`n r <= 4e6`), the Sherman-Morrison-Woodbury form
//! is used instead (Golub and Van Loan, 4th ed., §2.1.4): with `P = alpha I + beta A`,
//! `Z = P^{-1} (beta B)` (`r` sparse solves) and the dense `r x r` capacitance matrix
//! `S = D + C Z`, `y = P^{-1} b - Z S^{-1} C P^{-1} b`. The bordered matrix fills in
//! heavily when `C` has long rows (row sums of a pair approximation); Woodbury only factors
//! the sparse `P`. `P` then gets faer's supernodal LU whatever faer's flop heuristic prefers:
//! the `r` right-hand sides of `Z` are solved by dense blocks (the simplicial triangular solves
//! sweep the whole factor for every four of them: 42 % of a checker run on the PS pair
//! approximation at K = 60, `r = 121`, against about 10 % supernodal).
//!
//! A pattern without a coupling whose `A` has a few long rows (more than [`DENSE_ROW`] entries
//! and `8 sqrt(n)`: a generic model's rows that read a conservation law's eliminated variable,
//! `1 - x_1 - ... - x_n`) is split the same way: `A = A' + B C` with `A'` the other rows and
//! the long rows' diagonals, `B` the unit columns of the long rows, `C` their other entries,
//! `D = I`, and solved by Woodbury. Factored whole, one such row filled the LU of a
//! 10,000-entry chain to 1.3 GB (partial pivoting takes it as a pivot row, and every row
//! below it inherits its pattern). When the split is singular (`P` or `S`: a long row whose
//! diagonal is 0), the whole matrix is factored instead, from then on.
//!
//! A bordered matrix of size `n + r >= 10 000` (the triplet approximation from K = 22) is not
//! factorised completely: its complete LU fills in to ~1 GB at K = 30 (the fibre sums couple
//! every pair of `b`-slabs of the `K^3` grid, so no ordering keeps the fill local). It gets an
//! incomplete LU with level of fill 1 (symbolic pattern once, numeric factors at each
//! [`ShiftedLu::factor`], stored for the solves in single precision), and each [`ShiftedLu::solve`] runs GMRES(100) preconditioned with
//! it to a relative residual of `1e-12` ([`crate::krylov`]). The last `2 r` rows (the `r`
//! border rows and the `r` state rows before them) keep fill of level 2: the border rows `C`
//! are long sums over the state (fibre sums, marginals), and the Schur complement they carry is
//! what ILU(1) approximates worst. On the triplet approximation (`r = K^2 + 1`, the rows
//! before the border are the pair probabilities `P(a, b)` from which the marginals `y` are
//! summed) this cuts the GMRES iterations from ~90 to ~65 a solve at K = 30 and from ~170 to
//! ~87 at K = 40 (no more restarts), for ~0.25 M more entries in the factors
//! (bench/rows-triplet.md). When GMRES does not converge in
//! 1000 iterations (or a pivot of the incomplete factors vanishes), that solve and the next
//! ones with the same values use the complete LU instead (not interruptible by a deadline).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, LuSymbolicParams, NumericLu, SymbolicLu};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SymbolicSparseColMat;
use mfq_model::{Deadline, Jacobian, Sparsity, SparsityPattern};

/// Sparse systems from this size on are factorised on a helper thread by
/// [`ShiftedLu::factor_within`] (below it a factorisation takes milliseconds).
const THREADED_MIN_SIZE: usize = 2000;

/// Size from which [`ShiftedLu::factor_within`] runs a dense factorisation on a helper thread
/// (`n^3 / 3` multiply-adds: about 0.1 s at 1000 on one core).
const DENSE_THREADED_MIN_SIZE: usize = 1000;

/// The LU with partial pivoting of the dense `alpha I + beta J` (`n x n`).
///
/// # Errors
/// [`SingularMatrix`] when a pivot of `U` is exactly zero or not finite.
fn dense_lu(n: usize, alpha: f64, beta: f64, jac: &Jacobian) -> Result<faer::linalg::solvers::PartialPivLu<f64>, SingularMatrix> {
    let mut m = faer::Mat::<f64>::from_fn(n, n, |i, j| beta * jac.get(i, j));
    for i in 0..n {
        m[(i, i)] += alpha;
    }
    let f = m.partial_piv_lu();
    let u = f.U();
    match (0..n).find(|&i| u[(i, i)] == 0.0 || !u[(i, i)].is_finite()) {
        Some(index) => Err(SingularMatrix { index }),
        None => Ok(f),
    }
}
/// Bordered sparse systems from this size on (the triplet approximation from K = 22) are
/// solved by GMRES preconditioned with an incomplete LU ([`crate::krylov`]), not factorised
/// completely (whose fill-in reaches 1 GB at 28 000 unknowns).
const ITERATIVE_MIN_SIZE: usize = 10_000;

/// Fewest entries of a row of `A` that [`SparseKind::new`] splits off into a Woodbury
/// coupling (and more than `8 sqrt(n)`), see the module docs.
const DENSE_ROW: usize = 64;
/// The incomplete factors keep fill of level 2 (else 1) in the last `BORDER_FILL_ROWS r` rows
/// of a bordered matrix: its `r` border rows and as many state rows before them (see the module
/// docs).
const BORDER_FILL_ROWS: usize = 2;
/// Relative residual `||b - M y||_2 / ||b||_2` of the GMRES solves.
const GMRES_RTOL: f64 = 1e-12;
use crate::krylov::IluGmres;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether large bordered systems go to ILU(k) + GMRES (see [`set_iterative_solves`]).
static ITERATIVE_SOLVES: AtomicBool = AtomicBool::new(true);

/// Process-wide switch between the iterative solves of large bordered sparse systems (GMRES
/// with an ILU(k) preconditioner, the default) and their complete sparse LU (the method before
/// it): for benchmarks that measure both in one run (crates/mfq-fixpoint/benches/heavy.rs). Applies to
/// [`ShiftedLu`]s created afterwards.
pub fn set_iterative_solves(enabled: bool) {
    ITERATIVE_SOLVES.store(enabled, Ordering::Relaxed);
}
use nalgebra::{DMatrix, DVector};

/// A zero pivot met during factorisation: the matrix is singular to working precision.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("singular matrix: zero pivot in column {index}")]
pub struct SingularMatrix {
    /// Column (0-based) whose pivot vanished.
    pub index: usize,
}

/// Reusable LU factors of `alpha I + beta J`; allocation happens in [`ShiftedLu::new`] only
/// (banded) or once per factorisation (dense, inside nalgebra).
#[derive(Debug, Clone)]
pub struct ShiftedLu {
    n: usize,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// `ab`: band rows, `A[i][j]` at `ab[i * width + (j + lower - i)]` (the layout of the banded
    /// [`Jacobian`]); `rdiag`: reciprocals of the pivots of `U`.
    Banded {
        lower: usize,
        upper: usize,
        width: usize,
        ab: Vec<f64>,
        piv: Vec<usize>,
        rdiag: Vec<f64>,
    },
    /// faer's blocked dense LU with partial pivoting (nalgebra's unblocked one took 3.8 s for
    /// JIQ at K = 2048, a size the blocked one factors in a fraction of a second).
    Dense {
        lu: Option<faer::linalg::solvers::PartialPivLu<f64>>,
    },
    Sparse(Box<SparseKind>),
}

/// faer sparse LU of the (bordered) shifted matrix with a fixed pattern.
struct SparseKind {
    /// Size of the bordered system, `n + r`.
    size: usize,
    pattern: SymbolicSparseColMat<usize>,
    /// `None` before the analysis, or when it failed (structurally singular pattern).
    symbolic: Option<SymbolicLu<usize>>,
    /// Whether the symbolic analysis takes the supernodal factorisation whatever faer's flop
    /// heuristic says (Woodbury mode: the `r` right-hand sides of `Z` are then solved by dense
    /// blocks, see [`SparseKind::new`]).
    supernodal: bool,
    /// Whether the symbolic analysis (COLAMD ordering, elimination tree) has run.
    analysed: bool,
    values: Vec<f64>,
    /// Position in `values` of: the diagonal `(i, i)`, `i < n`; each entry of `A`, `B`, `C`, `D`.
    at_diag: Vec<usize>,
    at_a: Vec<usize>,
    at_b: Vec<usize>,
    at_c: Vec<usize>,
    at_d: Vec<usize>,
    lu: Option<NumericLu<usize, f64>>,
    /// Workspace of the numeric factorisation and of the solves (sized at the analysis for
    /// `max(1, r)` right-hand sides); `None` until then and in clones.
    scratch: Option<MemBuffer>,
    rhs: Vec<f64>,
    /// Woodbury mode (coupled patterns with small `r`): the coupling, `Z = P^{-1} beta B`
    /// (`n x r`, column-major), the LU of `S = D + C Z`.
    woodbury: Option<Woodbury>,
    /// The long rows of `A` split off into the coupling (see the module docs): where the
    /// values of `A` go.
    long_rows: Option<Box<LongRows>>,
    /// Iterative mode (bordered matrices from [`ITERATIVE_MIN_SIZE`] on): ILU(k) + GMRES, with
    /// the complete LU as the fallback when GMRES does not converge.
    iterative: Option<Box<IluGmres>>,
    /// Whether the incomplete factors of the current values are held (else `lu` is used).
    iterative_ready: bool,
    /// The deadline of the last [`ShiftedLu::factor_within`]: GMRES solves stop at it (leaving
    /// a zero step) instead of running on or falling back on the complete LU.
    deadline: Deadline,
}

/// The long rows of a pattern's `A` taken as a coupling `B C` (`B` unit columns, `D = I`):
/// `keep[q]` the entry of `A` that is entry `q` of `A'`, `to_c[q]` the entry of `A` that is
/// entry `q` of `C`; value buffers for `A'`, `C` and the ones of `B` and `D`.
#[derive(Clone)]
struct LongRows {
    keep: Vec<usize>,
    to_c: Vec<usize>,
    a_vals: Vec<f64>,
    c_vals: Vec<f64>,
    ones: Vec<f64>,
    /// The whole pattern, factored instead when the split is singular.
    whole: Option<SparsityPattern>,
}

impl LongRows {
    /// The split of `a` when it has rows of more than [`DENSE_ROW`] and `8 sqrt(n)` entries,
    /// few enough that `Z` (`n r`) stays small: `A'` and the coupling.
    fn split(n: usize, a: &mfq_model::Csr) -> Option<(LongRows, SparsityPattern)> {
        let long = DENSE_ROW.max((8.0 * (n as f64).sqrt()) as usize);
        let rows: Vec<usize> = (0..n).filter(|&i| a.row_span(i).1 - a.row_span(i).0 > long).collect();
        let r = rows.len();
        if r == 0 || n * r > 4_000_000 || 8 * r > n {
            return None;
        }
        let (mut kept, mut c_rows) = (vec![Vec::new(); n], vec![Vec::new(); r]);
        let (mut keep, mut to_c) = (Vec::new(), Vec::new());
        let mut k = 0;
        for (i, row) in kept.iter_mut().enumerate() {
            let (lo, hi) = a.row_span(i);
            let is_long = rows.get(k) == Some(&i);
            for s in lo..hi {
                let j = a.cols()[s];
                if is_long && j != i {
                    c_rows[k].push(j);
                    to_c.push(s);
                } else {
                    row.push(j);
                    keep.push(s);
                }
            }
            if is_long {
                k += 1;
            }
        }
        let b_rows = (0..n).map(|i| rows.binary_search(&i).map_or(Vec::new(), |k| vec![k])).collect();
        let d_rows = (0..r).map(|k| vec![k]).collect();
        let pattern = SparsityPattern::from_rows(n, kept).with_coupling(r, b_rows, c_rows, d_rows);
        let (a_vals, c_vals) = (vec![0.0; keep.len()], vec![0.0; to_c.len()]);
        Some((LongRows { keep, to_c, a_vals, c_vals, ones: vec![1.0; r], whole: None }, pattern))
    }
}

#[derive(Clone)]
struct Woodbury {
    n: usize,
    r: usize,
    coupling: mfq_model::Coupling,
    z: Vec<f64>,
    s: Option<nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>>,
    t: DVector<f64>,
    c_vals: Vec<f64>,
}

impl std::fmt::Debug for SparseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseKind").field("size", &self.size).field("nnz", &self.values.len()).finish_non_exhaustive()
    }
}

impl Clone for SparseKind {
    fn clone(&self) -> Self {
        SparseKind {
            size: self.size,
            pattern: self.pattern.clone(),
            symbolic: self.symbolic.clone(),
            supernodal: self.supernodal,
            analysed: self.analysed,
            values: self.values.clone(),
            at_diag: self.at_diag.clone(),
            at_a: self.at_a.clone(),
            at_b: self.at_b.clone(),
            at_c: self.at_c.clone(),
            at_d: self.at_d.clone(),
            lu: None,
            scratch: None,
            rhs: self.rhs.clone(),
            woodbury: self.woodbury.clone().map(|mut w| {
                w.s = None;
                w
            }),
            long_rows: self.long_rows.clone(),
            iterative: self.iterative.clone(),
            iterative_ready: self.iterative_ready,
            deadline: self.deadline.clone(),
        }
    }
}

impl SparseKind {
    /// Builds the column-compressed pattern of the bordered matrix (its symbolic LU comes at the
    /// first factorisation).
    fn new(n: usize, p: &SparsityPattern) -> Self {
        if p.coupling().is_none() {
            if let Some((long, split)) = LongRows::split(n, p.a()) {
                let mut kind = SparseKind::new(n, &split);
                kind.long_rows = Some(Box::new(LongRows { whole: Some(p.clone()), ..long }));
                return kind;
            }
        }
        Self::unsplit(n, p)
    }

    /// [`new`](Self::new) without splitting off long rows.
    fn unsplit(n: usize, p: &SparsityPattern) -> Self {
        let r = p.coupling().map_or(0, |c| c.d.nrows());
        if r > 0 && n * r <= 4_000_000 {
            // Woodbury: factor only P = alpha I + beta A
            let c = p.coupling().cloned().expect("r > 0");
            let a_only = SparsityPattern::from_rows(
                n,
                (0..n)
                    .map(|i| {
                        let (lo, hi) = p.a().row_span(i);
                        p.a().cols()[lo..hi].to_vec()
                    })
                    .collect(),
            );
            let mut kind = SparseKind::new(n, &a_only);
            kind.supernodal = true;
            kind.woodbury = Some(Woodbury { n, r, coupling: c, z: vec![0.0; n * r], s: None, t: DVector::zeros(r), c_vals: Vec::new() });
            return kind;
        }
        let size = n + r;
        // (col, row, source) triplets; source: 0 diag, 1 A, 2 B, 3 C, 4 D, with the index
        let mut trip: Vec<(usize, usize, u8, usize)> = Vec::with_capacity(n + p.nnz());
        (0..n).for_each(|i| trip.push((i, i, 0, i)));
        let mut push_csr = |m: &mfq_model::Csr, row0: usize, col0: usize, src: u8| {
            for i in 0..m.nrows() {
                let (lo, hi) = m.row_span(i);
                for s in lo..hi {
                    trip.push((col0 + m.cols()[s], row0 + i, src, s));
                }
            }
        };
        push_csr(p.a(), 0, 0, 1);
        if let Some(c) = p.coupling() {
            push_csr(&c.b, 0, n, 2);
            push_csr(&c.c, n, 0, 3);
            push_csr(&c.d, n, n, 4);
        }
        trip.sort_unstable_by_key(|t| (t.0, t.1));
        let mut col_ptr = vec![0usize; size + 1];
        let mut row_idx = Vec::with_capacity(trip.len());
        let mut at = [vec![0; n], vec![0; p.a().nnz()], Vec::new(), Vec::new(), Vec::new()];
        if let Some(c) = p.coupling() {
            at[2] = vec![0; c.b.nnz()];
            at[3] = vec![0; c.c.nnz()];
            at[4] = vec![0; c.d.nnz()];
        }
        let mut last = (usize::MAX, usize::MAX);
        for &(col, row, src, s) in &trip {
            if (col, row) != last {
                row_idx.push(row);
                col_ptr[col + 1] += 1;
                last = (col, row);
            }
            at[src as usize][s] = row_idx.len() - 1;
        }
        for c in 0..size {
            col_ptr[c + 1] += col_ptr[c];
        }
        let nnz = row_idx.len();
        let iterative = (r > 0 && size >= ITERATIVE_MIN_SIZE && ITERATIVE_SOLVES.load(Ordering::Relaxed))
            .then(|| Box::new(IluGmres::new(size, &col_ptr, &row_idx, BORDER_FILL_ROWS * r)));
        let pattern = SymbolicSparseColMat::new_checked(size, size, col_ptr, None, row_idx);
        let [at_diag, at_a, at_b, at_c, at_d] = at;
        SparseKind {
            size,
            pattern,
            // analysed at the first factorisation (COLAMD alone takes seconds at 27 000 states:
            // there it runs where `factor_within` can give up on it)
            symbolic: None,
            supernodal: false,
            analysed: false,
            values: vec![0.0; nnz],
            at_diag,
            at_a,
            at_b,
            at_c,
            at_d,
            lu: None,
            scratch: None,
            rhs: vec![0.0; size],
            woodbury: None,
            long_rows: None,
            iterative,
            iterative_ready: false,
            deadline: Deadline::none(),
        }
    }

    fn factor(&mut self, alpha: f64, beta: f64, jac: &Jacobian) -> Result<(), SingularMatrix> {
        let mut long = self.long_rows.take();
        let out = match &mut long {
            Some(l) => {
                let (a, _, _, _) = jac.sparse_values();
                l.a_vals.iter_mut().zip(&l.keep).for_each(|(v, &s)| *v = a[s]);
                l.c_vals.iter_mut().zip(&l.to_c).for_each(|(v, &s)| *v = a[s]);
                self.factor_values(alpha, beta, (&l.a_vals, &l.ones, &l.c_vals, &l.ones))
            }
            None => self.factor_values(alpha, beta, jac.sparse_values()),
        };
        if out.is_err() {
            // the split needs `P` (without the long rows' other entries) and `S` invertible,
            // which `J` does not promise (a long row whose diagonal is 0): the whole matrix
            // from now on
            if let Some(whole) = long.and_then(|l| l.whole) {
                *self = Self::unsplit(whole.dim(), &whole);
                return self.factor_values(alpha, beta, jac.sparse_values());
            }
            return out;
        }
        self.long_rows = long;
        out
    }

    /// [`factor`](Self::factor) of the values `(A, B, C, D)` of the pattern's parts.
    fn factor_values(&mut self, alpha: f64, beta: f64, (a, b, c, d): (&[f64], &[f64], &[f64], &[f64])) -> Result<(), SingularMatrix> {
        self.lu = None;
        self.values.iter_mut().for_each(|v| *v = 0.0);
        for &k in &self.at_diag {
            self.values[k] += alpha;
        }
        for (&k, v) in self.at_a.iter().zip(a) {
            self.values[k] += beta * v;
        }
        for (&k, v) in self.at_b.iter().zip(b) {
            self.values[k] += beta * v;
        }
        for (&k, v) in self.at_c.iter().zip(c) {
            self.values[k] += v;
        }
        for (&k, v) in self.at_d.iter().zip(d) {
            self.values[k] -= v;
        }
        if let Some(index) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(SingularMatrix { index: self.pattern.row_idx()[index].min(self.size - 1) });
        }
        self.iterative_ready = false;
        if let Some(it) = &mut self.iterative {
            // the incomplete factors; a (near-)zero pivot falls back to the complete LU, a
            // deadline that passed during their analysis leaves no factorisation
            if let Ok(ready) = it.factor(&self.values, &self.deadline) {
                self.iterative_ready = ready;
                return Ok(());
            }
        }
        self.complete_lu_of_values()?;
        if let (Some(w), Some(lu), Some(symbolic), Some(scratch)) = (&mut self.woodbury, &self.lu, &self.symbolic, &mut self.scratch) {
            let lu = LuRef::new_unchecked(symbolic, lu);
            if let Err(e) = w.factor(lu, MemStack::new(scratch), beta, b, c, d) {
                self.lu = None;
                return Err(e);
            }
        }
        Ok(())
    }

    /// The complete sparse LU of the values held, in `lu` (the symbolic analysis, COLAMD
    /// ordering, at the first call; supernodal in Woodbury mode, see [`SparseKind::new`]).
    fn complete_lu_of_values(&mut self) -> Result<(), SingularMatrix> {
        self.lu = None;
        let par = faer::get_global_parallelism();
        if !self.analysed {
            let params = LuSymbolicParams {
                supernodal_flop_ratio_threshold: if self.supernodal {
                    SupernodalThreshold::FORCE_SUPERNODAL
                } else {
                    SupernodalThreshold::AUTO
                },
                ..Default::default()
            };
            self.symbolic = factorize_symbolic_lu(self.pattern.as_ref(), params).ok();
            self.analysed = true;
        }
        let symbolic = self.symbolic.as_ref().ok_or(SingularMatrix { index: 0 })?;
        if self.scratch.is_none() {
            // once per pattern (a clone, the helper thread of `factor_within`, allocates its own)
            let cols = self.woodbury.as_ref().map_or(1, |w| w.r.max(1));
            let req =
                symbolic.factorize_numeric_lu_scratch::<f64>(par, Default::default()).or(symbolic.solve_in_place_scratch::<f64>(cols, par));
            self.scratch = MemBuffer::try_new(req).ok();
        }
        let scratch = self.scratch.as_mut().ok_or(SingularMatrix { index: 0 })?;
        let m = faer::sparse::SparseColMatRef::new(self.pattern.as_ref(), &self.values);
        let mut numeric = NumericLu::new();
        match symbolic.factorize_numeric_lu(&mut numeric, m, par, MemStack::new(scratch), Default::default()) {
            Ok(_) => {
                self.lu = Some(numeric);
                Ok(())
            }
            Err(faer::sparse::linalg::LuError::SymbolicSingular { index }) => Err(SingularMatrix { index }),
            Err(_) => Err(SingularMatrix { index: 0 }),
        }
    }

    fn solve(&mut self, b: &mut [f64]) {
        let n = b.len();
        if self.iterative_ready {
            if let Some(it) = &mut self.iterative {
                self.rhs[..n].copy_from_slice(b);
                self.rhs[n..].iter_mut().for_each(|v| *v = 0.0);
                let out = it.solve(&mut self.rhs, GMRES_RTOL, &self.deadline);
                if out.abandoned {
                    // past the deadline: a zero step, which the caller's deadline check follows
                    b.iter_mut().for_each(|v| *v = 0.0);
                    return;
                }
                if out.converged {
                    b.copy_from_slice(&self.rhs[..n]);
                    return;
                }
            }
            // GMRES did not converge: the complete LU of the same values, kept for the next solves
            self.iterative_ready = false;
            if self.complete_lu_of_values().is_err() {
                return;
            }
        }
        let (Some(lu), Some(symbolic), Some(scratch)) = (&self.lu, &self.symbolic, &mut self.scratch) else { return };
        self.rhs[..n].copy_from_slice(b);
        self.rhs[n..].iter_mut().for_each(|v| *v = 0.0);
        let size = self.size;
        LuRef::new_unchecked(symbolic, lu).solve_in_place_with_conj(
            faer::Conj::No,
            faer::MatMut::from_column_major_slice_mut(&mut self.rhs, size, 1),
            faer::get_global_parallelism(),
            MemStack::new(scratch),
        );
        if let Some(w) = &mut self.woodbury {
            w.correct(&mut self.rhs[..n]);
        }
        b.copy_from_slice(&self.rhs[..n]);
    }
}

impl Woodbury {
    /// `Z = P^{-1} (beta B)` and the LU of `S = D + C Z`.
    fn factor(
        &mut self,
        lu: LuRef<'_, usize, f64>,
        stack: &mut MemStack,
        beta: f64,
        b: &[f64],
        c: &[f64],
        d: &[f64],
    ) -> Result<(), SingularMatrix> {
        let (n, r) = (self.n, self.r);
        self.s = None;
        self.c_vals.clear();
        self.c_vals.extend_from_slice(c);
        self.z.iter_mut().for_each(|v| *v = 0.0);
        let cp = &self.coupling;
        for i in 0..n {
            let (lo, hi) = cp.b.row_span(i);
            for (&col, &bq) in cp.b.cols()[lo..hi].iter().zip(&b[lo..hi]) {
                self.z[col * n + i] += beta * bq;
            }
        }
        lu.solve_in_place_with_conj(
            faer::Conj::No,
            faer::MatMut::from_column_major_slice_mut(&mut self.z, n, r),
            faer::get_global_parallelism(),
            stack,
        );
        let mut s = DMatrix::<f64>::zeros(r, r);
        for k in 0..r {
            let (lo, hi) = cp.d.row_span(k);
            for (&col, &dq) in cp.d.cols()[lo..hi].iter().zip(&d[lo..hi]) {
                s[(k, col)] += dq;
            }
        }
        // S[k][l] += sum_j C[k][j] Z[j][l], column l of Z read contiguously (the same order of
        // the sum for each entry as row by row; walking the r columns for each C entry instead
        // strides by n and took about 8 % of a BDF run on the PS pair at K = 100)
        for l in 0..r {
            let zl = &self.z[l * n..(l + 1) * n];
            for k in 0..r {
                let (lo, hi) = cp.c.row_span(k);
                let mut acc = s[(k, l)];
                for (&j, &cv) in cp.c.cols()[lo..hi].iter().zip(&c[lo..hi]) {
                    acc += cv * zl[j];
                }
                s[(k, l)] = acc;
            }
        }
        let f = s.lu();
        // `f.u()` copies the whole `U`: once, not once per pivot (that was `r^3` copies, a fifth
        // of a pair-approximation sweep's time at r = 201)
        let u = f.u();
        if let Some(index) = (0..r).find(|&i| u[(i, i)] == 0.0 || !u[(i, i)].is_finite()) {
            return Err(SingularMatrix { index: n + index });
        }
        self.s = Some(f);
        Ok(())
    }

    /// `y <- y - Z S^{-1} C y` (with `y = P^{-1} b` on entry).
    fn correct(&mut self, y: &mut [f64]) {
        let Some(s) = &self.s else { return };
        let (n, r) = (self.n, self.r);
        let cp = &self.coupling;
        for k in 0..r {
            let (lo, hi) = cp.c.row_span(k);
            self.t[k] = (lo..hi).map(|q| self.c_vals[q] * y[cp.c.cols()[q]]).sum();
        }
        if !s.solve_mut(&mut self.t) {
            return;
        }
        // y -= Z t by faer's matrix-vector product (SIMD chosen at run time; the loop of one
        // axpy per column, SSE2 only, took 18 % of a checker run on the PS pair at K = 60, r = 121)
        let zm = faer::MatRef::from_column_major_slice(&self.z, n, r);
        let tm = faer::MatRef::from_column_major_slice(self.t.as_slice(), r, 1);
        faer::linalg::matmul::matmul(faer::MatMut::from_column_major_slice_mut(y, n, 1), faer::Accum::Add, zm, tm, -1.0, faer::Par::Seq);
    }
}

impl ShiftedLu {
    /// Whether solves are iterative (GMRES with an incomplete LU; see the module docs): then a
    /// factorisation costs less than one solve, and reusing an old one (chord steps) saves
    /// nothing.
    pub fn is_iterative(&self) -> bool {
        matches!(&self.kind, Kind::Sparse(sp) if sp.iterative.is_some())
    }

    /// Storage for an `n x n` matrix with the given sparsity.
    pub fn new(n: usize, sparsity: Sparsity) -> Self {
        let kind = match sparsity {
            Sparsity::Sparse(p) => Kind::Sparse(Box::new(SparseKind::new(n, &p))),
            Sparsity::Banded { lower, upper } if lower + upper + 1 < n => {
                let width = 2 * lower + upper + 1;
                Kind::Banded { lower, upper, width, ab: vec![0.0; n * width], piv: vec![0; n], rdiag: vec![0.0; n] }
            }
            _ => Kind::Dense { lu: None },
        };
        ShiftedLu { n, kind }
    }

    /// [`factor`](Self::factor) that stops waiting at `deadline` (its time limit or cancel
    /// flag): `Ok(false)` when it passed first, with no factorisation held. A large sparse
    /// factorisation (faer's LU, which cannot be interrupted: seconds for the redundancy
    /// triplet approximation at K = 30) runs on a helper thread, on a copy, while this thread
    /// watches the deadline; when it gives up, the helper finishes on its own and its result is
    /// dropped. Other factorisations are quick and run here.
    ///
    /// # Errors
    /// As [`factor`](Self::factor).
    pub fn factor_within(&mut self, alpha: f64, beta: f64, jac: &Jacobian, deadline: &Deadline) -> Result<bool, SingularMatrix> {
        if deadline.expired() {
            return Ok(false);
        }
        if let Kind::Dense { lu } = &mut self.kind {
            // a large dense factorisation on a helper thread, as the sparse one below
            let n = self.n;
            if n < DENSE_THREADED_MIN_SIZE || deadline.limit().is_none() {
                return self.factor(alpha, beta, jac).map(|()| true);
            }
            *lu = None;
            let jac = jac.clone();
            return match deadline.wait_for("mfq-dense-lu", move || dense_lu(n, alpha, beta, &jac)) {
                Ok(f) => {
                    *lu = Some(f?);
                    Ok(true)
                }
                Err(mfq_model::Abandoned::Expired) => Ok(false),
                Err(mfq_model::Abandoned::Panicked | mfq_model::Abandoned::NoThread) => Err(SingularMatrix { index: 0 }),
            };
        }
        let Kind::Sparse(sp) = &mut self.kind else { return self.factor(alpha, beta, jac).map(|()| true) };
        sp.deadline = deadline.clone();
        // (the incomplete factors take milliseconds; the GMRES solves watch the deadline)
        if sp.iterative.is_some() {
            sp.factor(alpha, beta, jac)?;
            return Ok(sp.iterative_ready || sp.lu.is_some());
        }
        if sp.size < THREADED_MIN_SIZE || deadline.limit().is_none() {
            return sp.factor(alpha, beta, jac).map(|()| true);
        }
        let mut work = sp.as_ref().clone();
        let jac = jac.clone();
        match deadline.wait_for("mfq-sparse-lu", move || {
            let r = work.factor(alpha, beta, &jac);
            (work, r)
        }) {
            Ok((work, r)) => {
                **sp = work;
                r.map(|()| true)
            }
            Err(mfq_model::Abandoned::Expired) => {
                sp.lu = None;
                Ok(false)
            }
            // the helper panicked, or none could be started
            Err(mfq_model::Abandoned::Panicked | mfq_model::Abandoned::NoThread) => Err(SingularMatrix { index: 0 }),
        }
    }

    /// Factorises `alpha I + beta J`.
    ///
    /// # Errors
    /// [`SingularMatrix`] when a pivot is exactly zero or not finite (sparse: when an entry
    /// is not finite or the factorisation fails).
    pub fn factor(&mut self, alpha: f64, beta: f64, jac: &Jacobian) -> Result<(), SingularMatrix> {
        let n = self.n;
        match &mut self.kind {
            Kind::Sparse(sp) => {
                sp.deadline = Deadline::none();
                sp.factor(alpha, beta, jac)
            }
            Kind::Banded { lower, upper, width, ab, piv, rdiag } => {
                let (p, q, w) = (*lower, *upper, *width);
                // A[i][j] lives at ab[i * w + (j + p - i)] for j - i in [-p, p + q]: the layout of a
                // banded Jacobian with the same band, whose storage is copied scaled in one pass
                let same_band = matches!(jac.sparsity(), Sparsity::Banded { lower, upper } if lower == p && upper == q);
                if same_band && jac.raw().len() == ab.len() {
                    for (a, v) in ab.iter_mut().zip(jac.raw()) {
                        *a = beta * v;
                    }
                } else {
                    ab.iter_mut().for_each(|v| *v = 0.0);
                    for i in 0..n {
                        let (lo, hi) = jac.row_range(i);
                        for j in lo..hi {
                            ab[i * w + (j + p - i)] = beta * jac.get(i, j);
                        }
                    }
                }
                for i in 0..n {
                    ab[i * w + p] += alpha;
                }
                // tridiagonal matrices (JSQ(d), Pod-LI and other local tail models): the band as
                // constants, fixed-length inner loops
                if (p, q) == (1, 1) {
                    band_eliminate(n, 1, 1, ab, piv, rdiag)
                } else {
                    band_eliminate(n, p, q, ab, piv, rdiag)
                }
            }
            Kind::Dense { lu } => {
                *lu = None;
                let f = dense_lu(n, alpha, beta, jac)?;
                *lu = Some(f);
                Ok(())
            }
        }
    }

    /// Solves `(alpha I + beta J) y = b` in place (`b` becomes `y`). Call after a successful
    /// [`factor`](Self::factor); before that it leaves `b` unchanged.
    pub fn solve(&mut self, b: &mut [f64]) {
        let n = self.n;
        match &mut self.kind {
            Kind::Sparse(sp) => sp.solve(b),
            Kind::Banded { lower, upper, ab, piv, rdiag, .. } => {
                if (*lower, *upper) == (1, 1) {
                    band_solve(n, 1, 1, ab, piv, rdiag, b);
                } else {
                    band_solve(n, *lower, *upper, ab, piv, rdiag, b);
                }
            }
            Kind::Dense { lu } => {
                if let Some(f) = lu {
                    use faer::linalg::solvers::Solve;
                    f.solve_in_place(faer::MatMut::from_column_major_slice_mut(b, n, 1));
                }
            }
        }
    }
}

/// Gaussian elimination with partial pivoting inside the band (Golub and Van Loan, 4th ed.,
/// §4.3.5): `ab` holds `n` rows of width `w = 2p + q + 1`, `A[i][j]` at `ab[i w + (j + p - i)]`;
/// on return `U` (with the fill-in of the `p` extra columns) and the multipliers of `L`, the row
/// interchanges in `piv` and the reciprocals of the pivots in `rdiag`. Inlined so that a call
/// with constant `p`, `q` (the tridiagonal case) compiles to fixed-length loops.
#[inline(always)]
fn band_eliminate(n: usize, p: usize, q: usize, ab: &mut [f64], piv: &mut [usize], rdiag: &mut [f64]) -> Result<(), SingularMatrix> {
    let w = 2 * p + q + 1;
    for k in 0..n {
        let last_row = (k + p).min(n - 1);
        let mut pr = k;
        let mut best = ab[k * w + p].abs();
        for i in k + 1..=last_row {
            let v = ab[i * w + (k + p - i)].abs();
            if v > best {
                best = v;
                pr = i;
            }
        }
        if best == 0.0 || !best.is_finite() {
            return Err(SingularMatrix { index: k });
        }
        piv[k] = pr;
        // columns k..=last_col of row k sit at ab[k w + p ..]; of row i > k at ab[i w + (k + p - i) ..]
        let m = (k + p + q).min(n - 1) - k + 1;
        if pr != k {
            let (top, bottom) = ab.split_at_mut(pr * w);
            let off = k + p - pr;
            top[k * w + p..k * w + p + m].swap_with_slice(&mut bottom[off..off + m]);
        }
        // the multipliers divide by the pivot (not multiply by its reciprocal): the division
        // then starts the next pivot's dependency chain, the reciprocal (for solves) is off it
        let pivot = ab[k * w + p];
        rdiag[k] = 1.0 / pivot;
        let (head, tail) = ab.split_at_mut((k + 1) * w);
        let row_k = &head[k * w + p + 1..k * w + p + m];
        for i in k + 1..=last_row {
            let at = (i - k - 1) * w + (k + p - i);
            let l = tail[at] / pivot;
            tail[at] = l;
            if l != 0.0 {
                for (a, u) in tail[at + 1..at + m].iter_mut().zip(row_k) {
                    *a -= l * u;
                }
            }
        }
    }
    Ok(())
}

/// Solves with the factors of [`band_eliminate`]: `b` becomes `A^{-1} b`.
#[inline(always)]
fn band_solve(n: usize, p: usize, q: usize, ab: &[f64], piv: &[usize], rdiag: &[f64], b: &mut [f64]) {
    let w = 2 * p + q + 1;
    for k in 0..n {
        if piv[k] != k {
            b.swap(k, piv[k]);
        }
        let bk = b[k];
        if bk != 0.0 {
            for i in k + 1..=(k + p).min(n - 1) {
                b[i] -= ab[i * w + (k + p - i)] * bk;
            }
        }
    }
    for k in (0..n).rev() {
        let m = (k + p + q).min(n - 1) - k;
        let row = &ab[k * w + p + 1..k * w + p + 1 + m];
        let mut s = b[k];
        for (u, x) in row.iter().zip(&b[k + 1..k + 1 + m]) {
            s -= u * x;
        }
        b[k] = s * rdiag[k];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(n: usize, sparsity: Sparsity) {
        // a band matrix needing pivoting (small diagonal)
        let mut j = Jacobian::new(n, sparsity.clone());
        let (p, q) = match sparsity {
            Sparsity::Banded { lower, upper } => (lower, upper),
            Sparsity::Dense => (n, n),
            Sparsity::Sparse(_) => unreachable!("dense and banded only"),
        };
        for i in 0..n {
            for c in i.saturating_sub(p)..(i + q + 1).min(n) {
                let v = ((i * 7 + c * 13) % 11) as f64 - 5.0 + if i == c { 0.01 } else { 0.0 };
                j.set(i, c, v);
            }
        }
        let (alpha, beta) = (0.3, -1.7);
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b = vec![0.0; n];
        for i in 0..n {
            b[i] = alpha * xs[i] + (0..n).map(|c| beta * j.get(i, c) * xs[c]).sum::<f64>();
        }
        let mut lu = ShiftedLu::new(n, sparsity.clone());
        lu.factor(alpha, beta, &j).unwrap();
        lu.solve(&mut b);
        let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10 * n as f64, "{sparsity:?}: {err}");
    }

    #[test]
    fn banded_and_dense_solves_recover_the_solution() {
        check(30, Sparsity::Banded { lower: 1, upper: 1 });
        check(40, Sparsity::Banded { lower: 3, upper: 2 });
        check(25, Sparsity::Dense);
        check(3, Sparsity::Banded { lower: 2, upper: 2 });
    }

    #[test]
    fn sparse_and_coupled_solves_recover_the_solution() {
        use mfq_model::SparsityPattern;
        use std::sync::Arc;
        // A: a 2D 5-point stencil on a 12 x 12 grid needing pivoting; coupling through r = 12
        // row sums u_k = sum_j x_{k,j} with D = I + (subdiagonal), B on the diagonal
        let g = 12;
        let n = g * g;
        let idx = |i: usize, j: usize| i * g + j;
        let mut rows = vec![Vec::new(); n];
        for i in 0..g {
            for j in 0..g {
                let r = &mut rows[idx(i, j)];
                r.push(idx(i, j));
                if i > 0 {
                    r.push(idx(i - 1, j))
                }
                if i + 1 < g {
                    r.push(idx(i + 1, j))
                }
                if j > 0 {
                    r.push(idx(i, j - 1))
                }
                if j + 1 < g {
                    r.push(idx(i, j + 1))
                }
            }
        }
        let b_rows = (0..n).map(|q| vec![q / g, q % g]).collect();
        let c_rows = (0..g).map(|k| (0..g).map(|j| idx(k, j)).collect()).collect();
        let d_rows = (0..g).map(|k| if k > 0 { vec![k - 1, k] } else { vec![k] }).collect();
        let p = SparsityPattern::from_rows(n, rows.clone()).with_coupling(g, b_rows, c_rows, d_rows);
        let s = Sparsity::Sparse(Arc::new(p));
        let mut jac = Jacobian::new(n, s.clone());
        for (q, r) in rows.iter().enumerate() {
            for &c in r {
                jac.set(q, c, ((q * 7 + c * 13) % 11) as f64 - 5.0 + if q == c { 0.01 } else { 0.0 });
            }
            jac.add_coupling_b(q, q / g, 0.3 + (q % 5) as f64 * 0.1);
            if q / g != q % g {
                jac.add_coupling_b(q, q % g, -0.2);
            }
        }
        for k in 0..g {
            for j in 0..g {
                jac.add_coupling_c(k, idx(k, j), 1.0 + 0.01 * j as f64);
            }
            jac.add_coupling_d(k, k, 2.0);
            if k > 0 {
                jac.add_coupling_d(k, k - 1, -0.5);
            }
        }
        assert!(jac.out_of_band().is_none());
        let dense = jac.to_dense();
        let (alpha, beta) = (0.3, -1.7);
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b: Vec<f64> = (0..n).map(|i| alpha * xs[i] + beta * (0..n).map(|c| dense[i * n + c] * xs[c]).sum::<f64>()).collect();
        let mut lu = ShiftedLu::new(n, s);
        lu.factor(alpha, beta, &jac).unwrap();
        lu.solve(&mut b);
        let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10 * n as f64, "{err}");
        // a second factorisation with other values reuses the symbolic analysis
        lu.factor(1.0, 0.0, &jac).unwrap();
        let mut e = xs.clone();
        lu.solve(&mut e);
        assert!(e.iter().zip(&xs).all(|(a, b)| (a - b).abs() < 1e-14));
    }

    /// A tridiagonal pattern with two long rows (every column: a conservation law's eliminated
    /// variable read by two rows) is split into a Woodbury coupling, and its solve recovers a
    /// known solution as a dense LU would; a second factorisation reuses the analysis.
    #[test]
    fn long_rows_are_solved_by_woodbury() {
        use mfq_model::SparsityPattern;
        use std::sync::Arc;
        let n: usize = 400;
        let long = [1usize, 250];
        let rows: Vec<Vec<usize>> =
            (0..n).map(|i| if long.contains(&i) { (0..n).collect() } else { (i.saturating_sub(1)..(i + 2).min(n)).collect() }).collect();
        let s = Sparsity::Sparse(Arc::new(SparsityPattern::from_rows(n, rows.clone())));
        let mut jac = Jacobian::new(n, s.clone());
        for (q, r) in rows.iter().enumerate() {
            for &c in r {
                // diagonals small enough that pivoting would choose the long rows
                let v = if q == c { -0.05 - (q % 3) as f64 * 0.01 } else { 0.3 + ((q * 7 + c * 13) % 11) as f64 * 0.05 };
                jac.set(q, c, if long.contains(&q) && q != c { -v } else { v });
            }
        }
        let SparseKind { long_rows, woodbury, .. } = match &ShiftedLu::new(n, s.clone()).kind {
            Kind::Sparse(sp) => (**sp).clone(),
            _ => unreachable!("a sparse pattern"),
        };
        assert!(long_rows.is_some() && woodbury.as_ref().is_some_and(|w| w.r == 2));
        // a long row with a zero diagonal at alpha = 0 (a Newton step): P is singular, so the
        // whole matrix is factored, to the same solution
        let mut zero = jac.clone();
        zero.set(250, 250, 0.0);
        let dz = zero.to_dense();
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b: Vec<f64> = (0..n).map(|i| -(0..n).map(|c| dz[i * n + c] * xs[c]).sum::<f64>()).collect();
        let mut lu = ShiftedLu::new(n, s.clone());
        lu.factor(0.0, -1.0, &zero).unwrap();
        assert!(matches!(&lu.kind, Kind::Sparse(sp) if sp.long_rows.is_none()), "the whole matrix is factored");
        lu.solve(&mut b);
        let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-9, "zero diagonal: {err}");
        let dense = jac.to_dense();
        for (alpha, beta) in [(0.3, -1.7), (2.0, 0.5)] {
            let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut b: Vec<f64> = (0..n).map(|i| alpha * xs[i] + beta * (0..n).map(|c| dense[i * n + c] * xs[c]).sum::<f64>()).collect();
            let mut lu = ShiftedLu::new(n, s.clone());
            lu.factor(alpha, beta, &jac).unwrap();
            lu.solve(&mut b);
            let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(err < 1e-10, "alpha {alpha}, beta {beta}: {err}");
        }
    }

    /// A bordered system large enough for ILU(k) + GMRES (a 3-D 7-point stencil on a 24^3
    /// grid, not symmetric, with 300 coupling rows of line sums: `n r > 4e6`, so not Woodbury)
    /// recovers a known solution, at a pseudo-transient shift and at `alpha = 0` (Newton).
    #[test]
    fn large_bordered_systems_are_solved_iteratively() {
        use mfq_model::SparsityPattern;
        use std::sync::Arc;
        let g = 24;
        let n = g * g * g;
        let idx = |i: usize, j: usize, k: usize| (i * g + j) * g + k;
        let (mut rows, mut vals) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for i in 0..g {
            for j in 0..g {
                for k in 0..g {
                    let q = idx(i, j, k);
                    let mut push = |c: usize, v: f64| {
                        rows[q].push(c);
                        vals[q].push(v);
                    };
                    // a generator-like stencil: leaves at rate 6.2, arrives from the neighbours
                    push(q, -6.2);
                    for (ok, c, v) in [
                        (i > 0, q.wrapping_sub(g * g), 1.2),
                        (i + 1 < g, q + g * g, 0.8),
                        (j > 0, q.wrapping_sub(g), 1.1),
                        (j + 1 < g, q + g, 0.9),
                        (k > 0, q.wrapping_sub(1), 1.3),
                        (k + 1 < g, q + 1, 0.7),
                    ] {
                        if ok {
                            push(c, v);
                        }
                    }
                }
            }
        }
        let r = 300;
        // coupling k < 300: the sum over the line (i, j) = (k / g, k % g), weighted 1/(1 + l)
        let c_rows: Vec<Vec<usize>> = (0..r).map(|k| (0..g).map(|l| idx(k / g, k % g, l)).collect()).collect();
        let b_rows: Vec<Vec<usize>> = (0..n).map(|q| vec![q % r, (q / 7) % r]).collect();
        let d_rows: Vec<Vec<usize>> = (0..r).map(|k| vec![k]).collect();
        let p = SparsityPattern::from_rows(n, rows.clone()).with_coupling(r, b_rows.clone(), c_rows.clone(), d_rows);
        let s = Sparsity::Sparse(Arc::new(p));
        let mut jac = Jacobian::new(n, s.clone());
        for q in 0..n {
            for (&c, &v) in rows[q].iter().zip(&vals[q]) {
                jac.add(q, c, v);
            }
            jac.add_coupling_b(q, q % r, 0.05);
            jac.add_coupling_b(q, (q / 7) % r, -0.03);
        }
        for (k, cr) in c_rows.iter().enumerate() {
            for (l, &c) in cr.iter().enumerate() {
                jac.add_coupling_c(k, c, 1.0 / (1 + l) as f64);
            }
            jac.add_coupling_d(k, k, 2.0);
        }
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        // J xs = A xs + B D^{-1} C xs
        let u: Vec<f64> = c_rows.iter().map(|cr| cr.iter().enumerate().map(|(l, &c)| xs[c] / (1 + l) as f64).sum::<f64>() / 2.0).collect();
        let jxs: Vec<f64> = (0..n)
            .map(|q| rows[q].iter().zip(&vals[q]).map(|(&c, &v)| v * xs[c]).sum::<f64>() + 0.05 * u[q % r] - 0.03 * u[(q / 7) % r])
            .collect();
        let mut lu = ShiftedLu::new(n, s);
        let Kind::Sparse(sp) = &lu.kind else { unreachable!("a sparse pattern") };
        assert!(sp.iterative.is_some(), "the iterative mode at n + r = {}", n + r);
        for alpha in [0.1, 0.0] {
            let mut b: Vec<f64> = xs.iter().zip(&jxs).map(|(x, j)| alpha * x - j).collect();
            lu.factor(alpha, -1.0, &jac).unwrap();
            lu.solve(&mut b);
            let Kind::Sparse(sp) = &lu.kind else { unreachable!("a sparse pattern") };
            assert!(sp.iterative_ready && sp.lu.is_none(), "alpha {alpha}: solved by GMRES, no complete LU");
            let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(err < 1e-9, "alpha {alpha}: {err}");
        }
    }

    #[test]
    fn singular_is_reported() {
        let j = Jacobian::new(5, Sparsity::Banded { lower: 1, upper: 1 });
        let mut lu = ShiftedLu::new(5, j.sparsity());
        assert_eq!(lu.factor(0.0, 1.0, &j), Err(SingularMatrix { index: 0 }));
    }
}
