//! Jacobian storage: dense, banded or general sparse (optionally with a low-rank coupling),
//! filled by a model, read by the solvers.

use std::sync::Arc;

/// Which entries of the Jacobian of a drift can be non-zero.
///
/// Solvers use this to pick a storage and a linear solver: a banded Jacobian of an
/// `n`-state model costs `O(n (lower + upper))` to store and `O(n lower (lower + upper))`
/// to factorise, against `O(n^3)` dense.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sparsity {
    /// Any entry may be non-zero.
    Dense,
    /// `J[i][j]` may be non-zero only for `i - lower <= j <= i + upper`.
    Banded {
        /// Number of sub-diagonals.
        lower: usize,
        /// Number of super-diagonals.
        upper: usize,
    },
    /// A general sparse pattern (CSR), optionally with a coupling `J = A + B D^{-1} C`
    /// through a few auxiliary quantities, see [`SparsityPattern`]. Used by the pair and
    /// triplet approximations, whose `K^2` / `K^3` states couple through row sums.
    Sparse(Arc<SparsityPattern>),
}

/// Compressed sparse rows: column indices of the entries of each row, sorted and unique.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<usize>,
    cols: Vec<usize>,
}

impl Csr {
    /// A pattern of `nrows x ncols` from the column indices of each row (sorted and
    /// de-duplicated here). Panics if `rows.len() != nrows` or an index is `>= ncols` (a model bug).
    pub fn from_rows(nrows: usize, ncols: usize, rows: Vec<Vec<usize>>) -> Self {
        assert_eq!(rows.len(), nrows, "pattern has {} rows, expected {nrows}", rows.len());
        let mut row_ptr = Vec::with_capacity(nrows + 1);
        let mut cols = Vec::with_capacity(rows.iter().map(Vec::len).sum());
        row_ptr.push(0);
        for mut r in rows {
            r.sort_unstable();
            r.dedup();
            if let Some(&last) = r.last() {
                assert!(last < ncols, "pattern column {last} outside {ncols} columns");
            }
            cols.extend_from_slice(&r);
            row_ptr.push(cols.len());
        }
        Csr { nrows, ncols, row_ptr, cols }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Positions `[lo, hi)` of row `i` in [`cols`](Self::cols) and in a value array.
    #[inline]
    pub fn row_span(&self, i: usize) -> (usize, usize) {
        (self.row_ptr[i], self.row_ptr[i + 1])
    }

    /// Column indices of every entry, row after row.
    pub fn cols(&self) -> &[usize] {
        &self.cols
    }

    /// Position of entry `(i, j)` in a value array, if it is in the pattern (binary search).
    #[inline]
    pub fn position(&self, i: usize, j: usize) -> Option<usize> {
        let (lo, hi) = self.row_span(i);
        self.cols[lo..hi].binary_search(&j).ok().map(|p| lo + p)
    }
}

/// The low-rank coupling `B D^{-1} C` of a [`SparsityPattern`]: `B` is `n x r`, `D` is
/// `r x r` (invertible), `C` is `r x n`.
///
/// It arises when a drift depends on the state through `r` auxiliary quantities `u(x)`
/// defined implicitly by `G(u, x) = 0` (row sums, ratios of row sums, cumulative sums):
/// with `f(x) = F(x, u(x))`, `J = F_x + F_u (G_u)^{-1} (-G_x)`, so `A = F_x`, `B = F_u`,
/// `D = G_u`, `C = -G_x`. Each factor is sparse even when `J` itself is nearly dense, and
/// linear solves with `alpha I + beta J` go through the sparse bordered matrix
/// `[[alpha I + beta A, beta B], [C, -D]]` (see `mfq_ode::linalg::ShiftedLu`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coupling {
    /// `B`, `n x r`.
    pub b: Csr,
    /// `C`, `r x n`.
    pub c: Csr,
    /// `D`, `r x r`.
    pub d: Csr,
}

/// A sparse Jacobian pattern `J = A + B D^{-1} C` (the coupling is optional).
///
/// `A` is stored by rows; its columns are coloured (greedily, so that no two columns of one
/// colour share a row) for finite differences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparsityPattern {
    a: Csr,
    coupling: Option<Coupling>,
    colour: Vec<usize>,
    colours: usize,
    by_column: Csr,
}

/// Largest sum over the rows of the squared row lengths for which
/// [`SparsityPattern::from_rows`] colours the columns greedily (else one colour per column).
const MAX_COLOURING_PAIRS: usize = 50_000_000;

impl SparsityPattern {
    /// The pattern of an `n x n` matrix from the column indices of each row, its columns
    /// coloured for finite differences (greedily; one colour per column when the rows' squared
    /// lengths sum to more than `5e7`, as with a row of 7,000 entries).
    pub fn from_rows(n: usize, rows: Vec<Vec<usize>>) -> Self {
        let a = Csr::from_rows(n, n, rows);
        let mut t = vec![Vec::new(); n];
        for i in 0..n {
            let (lo, hi) = a.row_span(i);
            for &j in &a.cols[lo..hi] {
                t[j].push(i);
            }
        }
        let by_column = Csr::from_rows(n, n, t);
        // the greedy colouring visits every pair of entries of a row: a long row (a
        // conservation law's eliminated variable read by a rate) makes it quadratic, and its
        // columns must all differ anyway: then one colour per column
        let pairs: usize = (0..n).map(|i| (a.row_span(i).1 - a.row_span(i).0).pow(2)).sum();
        if pairs > MAX_COLOURING_PAIRS {
            return SparsityPattern { a, coupling: None, colour: (0..n).collect(), colours: n, by_column };
        }
        // greedy colouring: column j gets the smallest colour unused by columns sharing a row
        let mut colour = vec![usize::MAX; n];
        let mut mark = vec![usize::MAX; n + 1];
        let mut colours = 0;
        for j in 0..n {
            let (lo, hi) = by_column.row_span(j);
            for &i in &by_column.cols[lo..hi] {
                let (rlo, rhi) = a.row_span(i);
                for &k in &a.cols[rlo..rhi] {
                    if colour[k] != usize::MAX {
                        mark[colour[k]] = j;
                    }
                }
            }
            let c = (0..=n).find(|&c| mark[c] != j).unwrap_or(0);
            colour[j] = c;
            colours = colours.max(c + 1);
        }
        SparsityPattern { a, coupling: None, colour, colours, by_column }
    }

    /// Adds the coupling `B D^{-1} C` through `r` auxiliary quantities: the column indices
    /// of each row of `B` (`n` rows, columns `< r`), `C` (`r` rows, columns `< n`) and `D`
    /// (`r` rows, columns `< r`).
    pub fn with_coupling(mut self, r: usize, b: Vec<Vec<usize>>, c: Vec<Vec<usize>>, d: Vec<Vec<usize>>) -> Self {
        let n = self.dim();
        self.coupling = Some(Coupling { b: Csr::from_rows(n, r, b), c: Csr::from_rows(r, n, c), d: Csr::from_rows(r, r, d) });
        self
    }

    /// Size `n` of the square matrix.
    pub fn dim(&self) -> usize {
        self.a.nrows
    }

    /// The sparse part `A`.
    pub fn a(&self) -> &Csr {
        &self.a
    }

    /// The coupling, if any.
    pub fn coupling(&self) -> Option<&Coupling> {
        self.coupling.as_ref()
    }

    /// Number of stored entries over `A`, `B`, `C` and `D` (memory is proportional to it).
    pub fn nnz(&self) -> usize {
        self.a.nnz() + self.coupling.as_ref().map_or(0, |c| c.b.nnz() + c.c.nnz() + c.d.nnz())
    }

    /// Number of column colours of `A` (drift evaluations per finite-difference Jacobian).
    pub fn colours(&self) -> usize {
        self.colours
    }
}

/// A square Jacobian `J[i][j] = d f_i / d x_j` of size `n x n`, dense or banded.
///
/// Banded storage keeps `2 lower + upper + 1` slots per row so that an LU factorisation
/// with partial pivoting can run in place (the extra `lower` slots hold the fill-in).
/// Writing outside the declared band is a model bug: it is recorded (see
/// [`Jacobian::out_of_band`]) instead of silently dropped, and the solvers report it.
#[derive(Debug, Clone)]
pub struct Jacobian {
    n: usize,
    sparsity: Sparsity,
    width: usize,
    offset: usize,
    data: Vec<f64>,
    out_of_band: Option<(usize, usize)>,
    /// Values of `B`, `C`, `D` of a coupled sparse pattern (empty otherwise).
    coupling: [Vec<f64>; 3],
}

impl Jacobian {
    /// A zero Jacobian of size `n x n` with the given sparsity.
    pub fn new(n: usize, sparsity: Sparsity) -> Self {
        let (width, offset) = match &sparsity {
            Sparsity::Dense => (n, 0),
            Sparsity::Banded { lower, upper } => (2 * lower + upper + 1, *lower),
            Sparsity::Sparse(p) => {
                assert_eq!(p.dim(), n, "sparsity pattern of dimension {} for a {n}x{n} Jacobian", p.dim());
                let data = vec![0.0; p.a.nnz()];
                let coupling = p
                    .coupling
                    .as_ref()
                    .map_or_else(Default::default, |c| [vec![0.0; c.b.nnz()], vec![0.0; c.c.nnz()], vec![0.0; c.d.nnz()]]);
                return Jacobian { n, sparsity, width: 0, offset: 0, data, out_of_band: None, coupling };
            }
        };
        Jacobian { n, sparsity, width, offset, data: vec![0.0; n * width], out_of_band: None, coupling: Default::default() }
    }

    /// Size `n` of the (square) matrix.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The sparsity this storage was made for.
    pub fn sparsity(&self) -> Sparsity {
        self.sparsity.clone()
    }

    /// Sets every stored entry to zero and forgets earlier out-of-band writes.
    pub fn clear(&mut self) {
        self.data.iter_mut().for_each(|v| *v = 0.0);
        self.coupling.iter_mut().for_each(|b| b.iter_mut().for_each(|v| *v = 0.0));
        self.out_of_band = None;
    }

    /// The rows of a banded Jacobian whose band is exactly `lower` sub- and `upper`
    /// super-diagonals, for writing whole rows in hot loops ([`set`](Self::set) checks the band
    /// on every write). Row `i` is a slice of length `2 lower + upper + 1` holding `J[i][j]` at
    /// `j + lower - i` for `i - lower <= j <= i + upper` (the layout of [`raw`](Self::raw)). The
    /// caller writes every entry of every row: the entries of columns outside `0..n` and the last
    /// `lower` entries (fill-in space of an LU factorisation) must be zero. Forgets earlier
    /// out-of-band writes, as [`clear`](Self::clear) does. `None` for any other storage.
    pub fn band_rows_mut(&mut self, lower: usize, upper: usize) -> Option<std::slice::ChunksExactMut<'_, f64>> {
        match self.sparsity {
            Sparsity::Banded { lower: l, upper: u } if l == lower && u == upper => {
                self.out_of_band = None;
                Some(self.data.chunks_exact_mut(self.width))
            }
            _ => None,
        }
    }

    #[inline]
    fn slot(&self, i: usize, j: usize) -> Option<usize> {
        match &self.sparsity {
            Sparsity::Dense => Some(i * self.n + j),
            &Sparsity::Banded { lower, upper } => {
                if j + lower >= i && j <= i + upper {
                    Some(i * self.width + (j + self.offset - i))
                } else {
                    None
                }
            }
            Sparsity::Sparse(p) => p.a.position(i, j),
        }
    }

    /// Entry `J[i][j]` (zero outside the band). Panics if `i` or `j` is `>= n`.
    ///
    /// For a coupled sparse pattern this includes `(B D^{-1} C)[i][j]`, which costs a dense
    /// `r x r` solve (allocates): use [`to_dense`](Self::to_dense) for many entries.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(i < self.n && j < self.n, "Jacobian index ({i}, {j}) outside {n}x{n}", n = self.n);
        let a = self.slot(i, j).map_or(0.0, |s| self.data[s]);
        match &self.sparsity {
            Sparsity::Sparse(p) if p.coupling.is_some() => a + self.coupling_column(j)[i],
            _ => a,
        }
    }

    /// Entry `A[i][j]` of the sparse part only (equal to [`get`](Self::get) without a coupling).
    #[inline]
    pub fn get_sparse_part(&self, i: usize, j: usize) -> f64 {
        self.slot(i, j).map_or(0.0, |s| self.data[s])
    }

    /// Adds `v` to `B[i][k]` of the coupling (row `i < n`, auxiliary `k < r`). Entries
    /// outside the pattern are dropped and recorded as out-of-band `(i, n + k)`.
    #[inline]
    pub fn add_coupling_b(&mut self, i: usize, k: usize, v: f64) {
        self.add_coupling(0, i, k, v, (i, self.n + k));
    }

    /// Adds `v` to `C[k][j]` of the coupling (auxiliary `k < r`, column `j < n`); outside the
    /// pattern recorded as `(n + k, j)`.
    #[inline]
    pub fn add_coupling_c(&mut self, k: usize, j: usize, v: f64) {
        self.add_coupling(1, k, j, v, (self.n + k, j));
    }

    /// Adds `v` to `D[k][l]` of the coupling (auxiliaries `k, l < r`); outside the pattern
    /// recorded as `(n + k, n + l)`.
    #[inline]
    pub fn add_coupling_d(&mut self, k: usize, l: usize, v: f64) {
        self.add_coupling(2, k, l, v, (self.n + k, self.n + l));
    }

    #[inline]
    fn add_coupling(&mut self, block: usize, i: usize, j: usize, v: f64, tag: (usize, usize)) {
        let pos = match &self.sparsity {
            Sparsity::Sparse(p) => p.coupling.as_ref().and_then(|c| [&c.b, &c.c, &c.d][block].position(i, j)),
            _ => None,
        };
        match pos {
            Some(s) => self.coupling[block][s] += v,
            None if v != 0.0 => self.out_of_band = Some(tag),
            None => {}
        }
    }

    /// Values of the sparse part `A` (aligned with [`SparsityPattern::a`]) and of `B`, `C`,
    /// `D` (aligned with [`Coupling`]); empty slices when absent.
    pub fn sparse_values(&self) -> (&[f64], &[f64], &[f64], &[f64]) {
        (&self.data, &self.coupling[0], &self.coupling[1], &self.coupling[2])
    }

    /// Column `j` of `B D^{-1} C` (dense, allocates).
    fn coupling_column(&self, j: usize) -> Vec<f64> {
        let mut out = vec![0.0; self.n];
        let Sparsity::Sparse(p) = &self.sparsity else {
            return out;
        };
        let Some(c) = &p.coupling else { return out };
        let r = c.d.nrows;
        let mut rhs = vec![0.0; r];
        for (k, v) in rhs.iter_mut().enumerate() {
            *v = c.c.position(k, j).map_or(0.0, |s| self.coupling[1][s]);
        }
        let z = self.solve_d(&rhs, 1);
        for (i, o) in out.iter_mut().enumerate().take(self.n) {
            let (lo, hi) = c.b.row_span(i);
            for s in lo..hi {
                *o += self.coupling[0][s] * z[c.b.cols[s]];
            }
        }
        out
    }

    /// Solves `D Z = R` for `m` right-hand sides stored column-major in `rhs` (`r x m`), by
    /// dense Gaussian elimination with partial pivoting (small `r` only; allocates).
    fn solve_d(&self, rhs: &[f64], m: usize) -> Vec<f64> {
        let Sparsity::Sparse(p) = &self.sparsity else {
            return rhs.to_vec();
        };
        let Some(c) = &p.coupling else {
            return rhs.to_vec();
        };
        let r = c.d.nrows;
        let mut d = vec![0.0; r * r];
        for k in 0..r {
            let (lo, hi) = c.d.row_span(k);
            for s in lo..hi {
                d[k * r + c.d.cols[s]] = self.coupling[2][s];
            }
        }
        let mut z = rhs.to_vec();
        for col in 0..r {
            let piv = (col..r).max_by(|&a, &b| d[a * r + col].abs().total_cmp(&d[b * r + col].abs())).unwrap_or(col);
            if piv != col {
                for q in 0..r {
                    d.swap(col * r + q, piv * r + q);
                }
                for q in 0..m {
                    z.swap(q * r + col, q * r + piv);
                }
            }
            let pv = d[col * r + col];
            for row in col + 1..r {
                let l = d[row * r + col] / pv;
                if l != 0.0 {
                    for q in col..r {
                        d[row * r + q] -= l * d[col * r + q];
                    }
                    for q in 0..m {
                        z[q * r + row] -= l * z[q * r + col];
                    }
                }
            }
        }
        for q in 0..m {
            for row in (0..r).rev() {
                let mut s = z[q * r + row];
                for k in row + 1..r {
                    s -= d[row * r + k] * z[q * r + k];
                }
                z[q * r + row] = s / d[row * r + row];
            }
        }
        z
    }

    /// Sets `J[i][j] = v`. Outside the band the write is dropped and recorded.
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        match self.slot(i, j) {
            Some(s) => self.data[s] = v,
            None if v != 0.0 => self.out_of_band = Some((i, j)),
            None => {}
        }
    }

    /// Adds `v` to `J[i][j]`. Outside the band the write is dropped and recorded.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        match self.slot(i, j) {
            Some(s) => self.data[s] += v,
            None if v != 0.0 => self.out_of_band = Some((i, j)),
            None => {}
        }
    }

    /// The first `(i, j)` written outside the declared band since the last [`clear`](Self::clear),
    /// if any: a model whose [`sparsity`](crate::MeanFieldModel::sparsity) is wrong.
    pub fn out_of_band(&self) -> Option<(usize, usize)> {
        self.out_of_band
    }

    /// Column range `[lo, hi)` that may hold non-zeros in row `i`.
    #[inline]
    pub fn row_range(&self, i: usize) -> (usize, usize) {
        match &self.sparsity {
            Sparsity::Dense => (0, self.n),
            &Sparsity::Banded { lower, upper } => (i.saturating_sub(lower), (i + upper + 1).min(self.n)),
            Sparsity::Sparse(p) if p.coupling.is_some() => (0, self.n),
            Sparsity::Sparse(p) => {
                let (lo, hi) = p.a.row_span(i);
                if lo == hi {
                    (i, i)
                } else {
                    (p.a.cols[lo], p.a.cols[hi - 1] + 1)
                }
            }
        }
    }

    /// Raw storage: row-major `n x n` (dense) or `n x (2 lower + upper + 1)` band rows
    /// with `J[i][j]` at `i * width + (j + lower - i)` (banded).
    pub fn raw(&self) -> &[f64] {
        &self.data
    }

    /// The matrix as a dense row-major `n x n` vector (allocates; for small `n`, eigenvalues, output).
    pub fn to_dense(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.n * self.n];
        if let Sparsity::Sparse(p) = &self.sparsity {
            let n = self.n;
            for i in 0..n {
                let (lo, hi) = p.a.row_span(i);
                for s in lo..hi {
                    out[i * n + p.a.cols[s]] += self.data[s];
                }
            }
            if let Some(c) = &p.coupling {
                // Z = D^{-1} C (r x n, column-major), then out += B Z
                let r = c.d.nrows;
                let mut rhs = vec![0.0; r * n];
                for k in 0..r {
                    let (lo, hi) = c.c.row_span(k);
                    for s in lo..hi {
                        rhs[c.c.cols[s] * r + k] = self.coupling[1][s];
                    }
                }
                let z = self.solve_d(&rhs, n);
                for i in 0..n {
                    let (lo, hi) = c.b.row_span(i);
                    for s in lo..hi {
                        let (k, bv) = (c.b.cols[s], self.coupling[0][s]);
                        for j in 0..n {
                            out[i * n + j] += bv * z[j * r + k];
                        }
                    }
                }
            }
            return out;
        }
        for i in 0..self.n {
            let (lo, hi) = self.row_range(i);
            for j in lo..hi {
                out[i * self.n + j] = self.get(i, j);
            }
        }
        out
    }
}

/// Fills `jac` with a forward-difference Jacobian of `drift` at `x`.
///
/// Dense: `n` extra drift evaluations. Banded: columns that share no row are perturbed
/// together (Curtis, Powell and Reid, "On the estimation of sparse Jacobian matrices",
/// IMA J. Appl. Math. 13, 1974), so `lower + upper + 1` evaluations whatever `n`. Sparse:
/// the same with the pattern's greedy column colouring ([`SparsityPattern::colours`]
/// evaluations). A coupled sparse pattern cannot be estimated this way (its factors are not
/// observable from the drift): such models must provide their analytic Jacobian; here only
/// `A` is filled, with the derivative of the whole drift on its pattern.
/// Step `h_j = sqrt(eps) max(|x_j|, 1e-3)`, kept inside `[0, 1]` by stepping backwards
/// when `x_j + h_j > 1` (occupancy fractions). `work` holds four buffers (`f(x)`, perturbed `x`, `f(x + h)`, steps), resized
/// to `n` on first use; nothing is allocated after that.
pub fn finite_difference_jacobian(drift: &dyn Fn(&[f64], &mut [f64]), x: &[f64], jac: &mut Jacobian, work: &mut [Vec<f64>; 4]) {
    let n = x.len();
    let [f0, xp, f1, steps] = work;
    f0.resize(n, 0.0);
    xp.resize(n, 0.0);
    f1.resize(n, 0.0);
    steps.resize(n, 0.0);
    drift(x, f0);
    jac.clear();
    if let Sparsity::Sparse(p) = jac.sparsity() {
        for g in 0..p.colours {
            xp.copy_from_slice(x);
            for j in (0..n).filter(|&j| p.colour[j] == g) {
                let mag = x[j].abs().max(1e-3);
                let mut h = f64::EPSILON.sqrt() * mag;
                if x[j] + h > 1.0 && x[j] - h >= 0.0 {
                    h = -h;
                }
                xp[j] = x[j] + h;
                steps[j] = xp[j] - x[j];
            }
            drift(xp, f1);
            for j in (0..n).filter(|&j| p.colour[j] == g) {
                let (lo, hi) = p.by_column.row_span(j);
                for &i in &p.by_column.cols[lo..hi] {
                    jac.set(i, j, (f1[i] - f0[i]) / steps[j]);
                }
            }
        }
        return;
    }
    let (groups, lower, upper) = match jac.sparsity() {
        Sparsity::Dense => (n, n, n),
        Sparsity::Banded { lower, upper } => ((lower + upper + 1).min(n), lower, upper),
        Sparsity::Sparse(_) => unreachable!("handled above"),
    };
    for g in 0..groups {
        xp.copy_from_slice(x);
        let mut j = g;
        while j < n {
            let mag = x[j].abs().max(1e-3);
            let mut h = f64::EPSILON.sqrt() * mag;
            if x[j] + h > 1.0 && x[j] - h >= 0.0 {
                h = -h;
            }
            xp[j] = x[j] + h;
            steps[j] = xp[j] - x[j];
            j += groups;
        }
        drift(xp, f1);
        let mut j = g;
        while j < n {
            let lo = j.saturating_sub(upper);
            let hi = (j + lower + 1).min(n);
            for i in lo..hi {
                jac.set(i, j, (f1[i] - f0[i]) / steps[j]);
            }
            j += groups;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tridiagonal pattern takes 3 colours; with a row of every column (8,000 entries, whose
    /// columns must all differ) every column has its own colour, found without the quadratic
    /// greedy pass; either way no two columns of one colour share a row.
    #[test]
    fn colours_separate_the_columns_of_each_row() {
        let tri = |n: usize| -> Vec<Vec<usize>> { (0..n).map(|i| (i.saturating_sub(1)..(i + 2).min(n)).collect()).collect() };
        let p = SparsityPattern::from_rows(100, tri(100));
        assert_eq!(p.colours(), 3);
        let n = 8000;
        let mut rows = tri(n);
        rows[1] = (0..n).collect();
        let p = SparsityPattern::from_rows(n, rows);
        assert_eq!(p.colours(), n);
        for q in [&p, &SparsityPattern::from_rows(100, tri(100))] {
            for i in 0..q.dim() {
                let (lo, hi) = q.a.row_span(i);
                let mut seen: Vec<usize> = q.a.cols[lo..hi].iter().map(|&j| q.colour[j]).collect();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), hi - lo, "row {i}");
            }
        }
    }

    #[test]
    fn band_rows_are_the_raw_layout() {
        let mut j = Jacobian::new(4, Sparsity::Banded { lower: 1, upper: 1 });
        assert!(j.band_rows_mut(1, 2).is_none() && j.band_rows_mut(2, 1).is_none());
        j.set(3, 0, 1.0); // out of band: recorded, then forgotten by band_rows_mut
        assert!(j.out_of_band().is_some());
        for (i, row) in j.band_rows_mut(1, 1).unwrap().enumerate() {
            assert_eq!(row.len(), 4);
            row[0] = if i > 0 { 10.0 * i as f64 + (i - 1) as f64 } else { 0.0 };
            row[1] = 11.0 * i as f64;
            row[2] = if i < 3 { 10.0 * i as f64 + (i + 1) as f64 } else { 0.0 };
        }
        assert!(j.out_of_band().is_none());
        for i in 0..4usize {
            for c in 0..4usize {
                let want = if i.abs_diff(c) <= 1 { (10 * i + c) as f64 } else { 0.0 };
                assert_eq!(j.get(i, c), want, "({i}, {c})");
            }
        }
        assert!(Jacobian::new(4, Sparsity::Dense).band_rows_mut(1, 1).is_none());
    }

    #[test]
    fn banded_storage_round_trip() {
        let mut j = Jacobian::new(5, Sparsity::Banded { lower: 1, upper: 2 });
        j.set(2, 1, 3.0);
        j.set(2, 4, 4.0);
        assert_eq!(j.get(2, 1), 3.0);
        assert_eq!(j.get(2, 4), 4.0);
        assert_eq!(j.get(2, 0), 0.0);
        assert!(j.out_of_band().is_none());
        j.set(4, 0, 1.0);
        assert_eq!(j.out_of_band(), Some((4, 0)));
    }

    #[test]
    fn sparse_pattern_storage_colouring_and_coupling() {
        // A = tridiagonal 4x4 pattern; coupling through one auxiliary u = x_0 + x_3 (D = 1).
        let rows = (0..4).map(|i: usize| (i.saturating_sub(1)..(i + 2).min(4)).collect()).collect();
        let p =
            SparsityPattern::from_rows(4, rows).with_coupling(1, vec![vec![0], vec![], vec![], vec![0]], vec![vec![0, 3]], vec![vec![0]]);
        assert_eq!(p.nnz(), 10 + 2 + 2 + 1);
        assert!(p.colours() <= 3);
        let mut j = Jacobian::new(4, Sparsity::Sparse(Arc::new(p)));
        j.set(1, 2, 5.0);
        j.add(1, 2, 1.0);
        j.set(0, 3, 1.0);
        assert_eq!(j.out_of_band(), Some((0, 3)));
        j.add_coupling_b(0, 0, 2.0);
        j.add_coupling_b(3, 0, -1.0);
        j.add_coupling_c(0, 0, 1.0);
        j.add_coupling_c(0, 3, 1.0);
        j.add_coupling_d(0, 0, 4.0);
        // J = A + B C / 4: entry (0,3) = 2 * 1 / 4, (3,0) = -1/4, (1,2) = 6
        assert!((j.get(0, 3) - 0.5).abs() < 1e-15);
        assert!((j.get(3, 0) + 0.25).abs() < 1e-15);
        assert_eq!(j.get(1, 2), 6.0);
        let d = j.to_dense();
        assert!((d[3] - 0.5).abs() < 1e-15 && (d[12] + 0.25).abs() < 1e-15 && d[6] == 6.0);
    }

    #[test]
    fn finite_differences_on_a_sparse_pattern() {
        // f_i = x_i^2 - x_{(i + 3) % 7}: pattern {i, (i + 3) % 7}
        let drift = |x: &[f64], f: &mut [f64]| {
            for i in 0..7 {
                f[i] = x[i] * x[i] - x[(i + 3) % 7];
            }
        };
        let p = SparsityPattern::from_rows(7, (0..7).map(|i| vec![i, (i + 3) % 7]).collect());
        let mut jac = Jacobian::new(7, Sparsity::Sparse(Arc::new(p)));
        let x = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.4];
        let mut work = Default::default();
        finite_difference_jacobian(&drift, &x, &mut jac, &mut work);
        for (i, xi) in x.iter().enumerate() {
            assert!((jac.get(i, i) - 2.0 * xi).abs() < 1e-6);
            assert!((jac.get(i, (i + 3) % 7) + 1.0).abs() < 1e-6);
        }
        assert!(jac.out_of_band().is_none());
    }

    #[test]
    fn finite_differences_of_a_tridiagonal_map() {
        // f_i = x_{i-1} - 2 x_i^2 + 3 x_{i+1}; exact J is known.
        let drift = |x: &[f64], f: &mut [f64]| {
            let n = x.len();
            for i in 0..n {
                let l = if i > 0 { x[i - 1] } else { 0.0 };
                let r = if i + 1 < n { x[i + 1] } else { 0.0 };
                f[i] = l - 2.0 * x[i] * x[i] + 3.0 * r;
            }
        };
        let x = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2];
        let mut jac = Jacobian::new(6, Sparsity::Banded { lower: 1, upper: 1 });
        let mut work = Default::default();
        finite_difference_jacobian(&drift, &x, &mut jac, &mut work);
        for (i, xi) in x.iter().enumerate().take(6) {
            assert!((jac.get(i, i) + 4.0 * xi).abs() < 1e-6);
            if i > 0 {
                assert!((jac.get(i, i - 1) - 1.0).abs() < 1e-6);
            }
            if i + 1 < 6 {
                assert!((jac.get(i, i + 1) - 3.0).abs() < 1e-6);
            }
        }
    }
}
