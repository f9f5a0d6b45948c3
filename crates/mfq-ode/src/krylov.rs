//! Incomplete LU with level-of-fill `k` (ILU(k)) and restarted GMRES with right
//! preconditioning, for the large bordered matrices of [`crate::linalg::ShiftedLu`].
//!
//! The pair/triplet approximations have `K^3` states coupled through a 3-D stencil and
//! auxiliary fibre sums; a complete sparse LU of their shifted Jacobians fills in to about
//! 1 GB at K = 30 whatever the column ordering (the quotient graph of the `b`-slabs is
//! complete through the fibre sums). An incomplete factorisation keeps only the fill of level
//! `<= k` (Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., SIAM 2003,
//! §10.3.3, Algorithm 10.6), and GMRES(m) (Saad and Schultz, SIAM J. Sci. Stat. Comput.
//! 7(3), 1986; Saad 2003, §6.5 and §9.3.2, right preconditioning) solves to a relative
//! residual `||b - M x||_2 <= rtol ||b||_2`. The last rows of the matrix may keep more fill
//! ([`TAIL_FILL_LEVEL`]): the border rows of a bordered matrix are long sums over the state,
//! and the Schur complement they carry is what a low level approximates worst (the caller
//! chooses how many rows, `mfq_ode::linalg`). The symbolic phase (the pattern of the factors)
//! runs once per pattern; a factorisation and a solve allocate nothing.
//!
//! The triangular solves with the incomplete factors are bound by memory traffic (they take
//! most of a GMRES iteration), so the factors are computed in `f64` and then stored for the
//! solves in single precision with 32-bit column indices (8 bytes an entry instead of 16), `L`
//! and `U` apart so that each sweep streams only its own factor. The preconditioner is then the
//! exact inverse of slightly different (rounded) incomplete factors: still a fixed linear map,
//! applied in `f64` arithmetic, so GMRES (in `f64` throughout, on the true matrix) converges to
//! the same tolerance; only the preconditioner's quality could change, and the incomplete
//! factors differ from the true ones far more than by the rounding to `f32` (Saad 2003, §9.3.2:
//! any fixed non-singular right preconditioner leaves the residual of GMRES that of the
//! original system).

use mfq_model::Deadline;

/// Level of fill kept by the incomplete factorisation.
const FILL_LEVEL: usize = 1;
/// Level of fill kept in the last rows (see [`IluGmres::new`]).
const TAIL_FILL_LEVEL: usize = 2;
/// Krylov dimension before a restart (the basis: `RESTART + 1` vectors of the system's size).
const RESTART: usize = 100;
/// Restarts before giving up (the caller then factorises completely).
const MAX_RESTARTS: usize = 10;
/// A pivot below this times the largest entry of its row counts as zero.
const PIVOT_TOL: f64 = 1e-13;

/// ILU(k) factors and GMRES storage for one sparsity pattern (row-compressed).
#[derive(Debug, Clone)]
pub(crate) struct IluGmres {
    size: usize,
    restart: usize,
    /// Rows from this one on keep fill up to [`TAIL_FILL_LEVEL`], the others [`FILL_LEVEL`].
    tail_start: usize,
    /// Row pointers, columns and values of the matrix (CSR, columns sorted).
    m_ptr: Vec<usize>,
    m_col: Vec<u32>,
    m_val: Vec<f64>,
    /// CSR position of each value of the column-compressed input.
    from_csc: Vec<usize>,
    /// Pattern of the factors (`L` strictly below, `U` from the diagonal), their values, the
    /// position of each diagonal, and the factor position of each matrix entry.
    f_ptr: Vec<usize>,
    f_col: Vec<u32>,
    f_val: Vec<f64>,
    f_diag: Vec<usize>,
    /// Reciprocals of the pivots.
    f_rdiag: Vec<f64>,
    /// The factors as the triangular solves read them (see the module docs): `L` strictly
    /// below the diagonal and `U` strictly above it, each row-compressed, values rounded to
    /// `f32`.
    l_ptr: Vec<usize>,
    l_col: Vec<u32>,
    l_val: Vec<f32>,
    u_ptr: Vec<usize>,
    u_col: Vec<u32>,
    u_val: Vec<f32>,
    m_in_f: Vec<usize>,
    /// Scratch: offset in the current factor row of each of its columns (`u32::MAX`: none).
    marker: Vec<u32>,
    /// GMRES: Krylov basis (`restart + 1` vectors), Hessenberg matrix (column-major,
    /// `(restart + 1) x restart`), Givens rotations, right-hand side of the least-squares
    /// problem, iterate, residual and work vectors.
    basis: Vec<f64>,
    hess: Vec<f64>,
    cs: Vec<f64>,
    sn: Vec<f64>,
    g: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    w: Vec<f64>,
    z: Vec<f64>,
}

/// What a solve did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GmresOutcome {
    /// Whether `||b - M x||_2 <= rtol ||b||_2` was reached.
    pub converged: bool,
    /// Matrix-vector products (one preconditioner solve each).
    pub iterations: usize,
    /// Whether the deadline passed first (then `b` holds no solution).
    pub abandoned: bool,
}

impl IluGmres {
    /// Storage for the column-compressed pattern (`col_ptr`, `row_idx`; every diagonal entry
    /// present) of a `size x size` matrix, with the ILU(k) pattern computed here: level of fill
    /// [`FILL_LEVEL`] in the first `size - tail_rows` rows, [`TAIL_FILL_LEVEL`] in the last
    /// `tail_rows` (of a bordered matrix: the border rows, whose long rows `C` of sums over
    /// the state ILU(1) approximates worst, and the rows just before them; see the module docs).
    ///
    /// # Panics
    /// When `size` exceeds `u32::MAX` (column indices are stored in 32 bits).
    pub(crate) fn new(size: usize, col_ptr: &[usize], row_idx: &[usize], tail_rows: usize) -> Self {
        assert!(u32::try_from(size).is_ok(), "ILU + GMRES takes fewer than 2^32 unknowns");
        let nnz = row_idx.len();
        // transpose to CSR, remembering where each CSC value goes (columns come out sorted)
        let mut m_ptr = vec![0usize; size + 1];
        row_idx.iter().for_each(|&r| m_ptr[r + 1] += 1);
        for i in 0..size {
            m_ptr[i + 1] += m_ptr[i];
        }
        let mut next = m_ptr.clone();
        let (mut m_col, mut from_csc) = (vec![0u32; nnz], vec![0usize; nnz]);
        for c in 0..size {
            for k in col_ptr[c]..col_ptr[c + 1] {
                let r = row_idx[k];
                m_col[next[r]] = c as u32;
                from_csc[k] = next[r];
                next[r] += 1;
            }
        }
        let restart = RESTART;
        IluGmres {
            size,
            restart,
            tail_start: size.saturating_sub(tail_rows),
            m_ptr,
            m_col,
            m_val: vec![0.0; nnz],
            from_csc,
            f_ptr: Vec::new(),
            f_col: Vec::new(),
            f_val: Vec::new(),
            f_diag: Vec::new(),
            f_rdiag: vec![0.0; size],
            l_ptr: vec![0; size + 1],
            l_col: Vec::new(),
            l_val: Vec::new(),
            u_ptr: vec![0; size + 1],
            u_col: Vec::new(),
            u_val: Vec::new(),
            m_in_f: Vec::new(),
            marker: vec![u32::MAX; size],
            basis: vec![0.0; size * (restart + 1)],
            hess: vec![0.0; (restart + 1) * restart],
            cs: vec![0.0; restart],
            sn: vec![0.0; restart],
            g: vec![0.0; restart + 1],
            x: vec![0.0; size],
            r: vec![0.0; size],
            w: vec![0.0; size],
            z: vec![0.0; size],
        }
    }

    /// The ILU(k) pattern, at the first factorisation; `false` when `deadline` passed first.
    fn analyse(&mut self, deadline: &Deadline) -> bool {
        if !self.f_ptr.is_empty() {
            return true;
        }
        let Some((f_ptr, f_col, f_diag)) =
            symbolic_iluk(self.size, &self.m_ptr, &self.m_col, [FILL_LEVEL, TAIL_FILL_LEVEL], self.tail_start, deadline)
        else {
            return false;
        };
        let f_col: Vec<u32> = f_col.into_iter().map(|c| c as u32).collect();
        self.m_in_f = vec![0usize; self.m_col.len()];
        for i in 0..self.size {
            let row = &f_col[f_ptr[i]..f_ptr[i + 1]];
            for s in self.m_ptr[i]..self.m_ptr[i + 1] {
                self.m_in_f[s] = f_ptr[i] + row.binary_search(&self.m_col[s]).expect("the ILU pattern contains the matrix's");
            }
        }
        // the split single-precision copy: its pattern now, its values at each factorisation
        for i in 0..self.size {
            self.l_ptr[i + 1] = self.l_ptr[i] + (f_diag[i] - f_ptr[i]);
            self.u_ptr[i + 1] = self.u_ptr[i] + (f_ptr[i + 1] - f_diag[i] - 1);
        }
        self.l_col = (0..self.size).flat_map(|i| f_col[f_ptr[i]..f_diag[i]].iter().copied()).collect();
        self.u_col = (0..self.size).flat_map(|i| f_col[f_diag[i] + 1..f_ptr[i + 1]].iter().copied()).collect();
        self.l_val = vec![0.0; self.l_col.len()];
        self.u_val = vec![0.0; self.u_col.len()];
        self.f_val = vec![0.0; f_col.len()];
        (self.f_ptr, self.f_col, self.f_diag) = (f_ptr, f_col, f_diag);
        true
    }

    /// Takes the matrix values (aligned with the column-compressed pattern of [`new`](Self::new))
    /// and computes the incomplete factors (their pattern at the first call). `Ok(false)` when
    /// `deadline` passed during the pattern's analysis; `Err(row)` on a (near-)zero pivot.
    pub(crate) fn factor(&mut self, csc_values: &[f64], deadline: &Deadline) -> Result<bool, usize> {
        if !self.analyse(deadline) {
            return Ok(false);
        }
        for (&k, &v) in self.from_csc.iter().zip(csc_values) {
            self.m_val[k] = v;
        }
        self.f_val.iter_mut().for_each(|v| *v = 0.0);
        for (&k, &v) in self.m_in_f.iter().zip(&self.m_val) {
            self.f_val[k] = v;
        }
        // IKJ variant of Gaussian elimination restricted to the pattern (Saad 2003, Alg. 10.3).
        // Row `i` is updated by the rows `k < i` before it, so the values split at its start:
        // the finished rows below, the current row above (no bounds checks on either side in
        // the update loop, and the marker holds offsets into the current row).
        let (f_ptr, f_col, f_diag, marker) = (&self.f_ptr, &self.f_col, &self.f_diag, &mut self.marker);
        for i in 0..self.size {
            let (lo, hi, d) = (f_ptr[i], f_ptr[i + 1], f_diag[i]);
            let (done, rest) = self.f_val.split_at_mut(lo);
            let row = &mut rest[..hi - lo];
            let cols = &f_col[lo..hi];
            let row_max = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (s, &c) in cols.iter().enumerate() {
                marker[c as usize] = s as u32;
            }
            for s in 0..d - lo {
                let k = cols[s] as usize;
                let (kd, ke) = (f_diag[k], f_ptr[k + 1]);
                let l = row[s] / done[kd];
                row[s] = l;
                if l == 0.0 {
                    // (exact zeros: values of the Jacobian at empty states, and their fill)
                    continue;
                }
                for (&c, &u) in f_col[kd + 1..ke].iter().zip(&done[kd + 1..ke]) {
                    let at = marker[c as usize];
                    if at != u32::MAX {
                        row[at as usize] -= l * u;
                    }
                }
            }
            for &c in cols {
                marker[c as usize] = u32::MAX;
            }
            let p = row[d - lo];
            if !(p.abs() > PIVOT_TOL * row_max && p.is_finite()) {
                return Err(i);
            }
            self.f_rdiag[i] = 1.0 / p;
        }
        // the single-precision copy read by the solves (an entry beyond the range of f32
        // counts as a failed factorisation: the caller falls back on the complete LU)
        let (mut l, mut u) = (0, 0);
        for i in 0..self.size {
            let (lo, d, hi) = (self.f_ptr[i], self.f_diag[i], self.f_ptr[i + 1]);
            for &v in &self.f_val[lo..d] {
                self.l_val[l] = v as f32;
                l += 1;
            }
            for &v in &self.f_val[d + 1..hi] {
                self.u_val[u] = v as f32;
                u += 1;
            }
        }
        if let Some(at) = self.l_val.iter().chain(&self.u_val).position(|v| !v.is_finite()) {
            let row = if at < l { self.l_ptr.partition_point(|&p| p <= at) } else { self.u_ptr.partition_point(|&p| p <= at - l) };
            return Err(row.saturating_sub(1));
        }
        Ok(true)
    }

    /// `v <- (L U)^{-1} v` with the single-precision factors (arithmetic in `f64`).
    fn precondition(&self, v: &mut [f64]) {
        for i in 0..self.size {
            let (lo, hi) = (self.l_ptr[i], self.l_ptr[i + 1]);
            let s = sparse_dot(&self.l_val[lo..hi], &self.l_col[lo..hi], v);
            v[i] -= s;
        }
        for i in (0..self.size).rev() {
            let (lo, hi) = (self.u_ptr[i], self.u_ptr[i + 1]);
            let s = sparse_dot(&self.u_val[lo..hi], &self.u_col[lo..hi], v);
            v[i] = (v[i] - s) * self.f_rdiag[i];
        }
    }

    /// `out <- M v`.
    fn matvec(&self, v: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            let (lo, hi) = (self.m_ptr[i], self.m_ptr[i + 1]);
            *o = sparse_dot(&self.m_val[lo..hi], &self.m_col[lo..hi], v);
        }
    }

    /// Solves `M x = b` in place by GMRES(RESTART) preconditioned on the right with the
    /// incomplete factors, from `x = 0`, to `||b - M x||_2 <= rtol ||b||_2` (checked on the true
    /// residual at each restart). Stops early, `abandoned`, when `deadline` passes.
    pub(crate) fn solve(&mut self, b: &mut [f64], rtol: f64, deadline: &Deadline) -> GmresOutcome {
        let n = self.size;
        let bnorm = norm(b);
        let mut out = GmresOutcome { converged: true, iterations: 0, abandoned: false };
        if bnorm == 0.0 {
            return out;
        }
        let target = rtol * bnorm;
        self.x.iter_mut().for_each(|v| *v = 0.0);
        self.r.copy_from_slice(b);
        let mut beta = bnorm;
        out.converged = false;
        for _ in 0..MAX_RESTARTS {
            let k = self.arnoldi_cycle(beta, target, &mut out.iterations, deadline);
            if deadline.expired() {
                out.abandoned = true;
                return out;
            }
            self.update_iterate(k);
            // the true residual r = b - M x
            let (x, mut r) = (std::mem::take(&mut self.x), std::mem::take(&mut self.r));
            self.matvec(&x, &mut r);
            r.iter_mut().zip(b.iter()).for_each(|(r, b)| *r = b - *r);
            beta = norm(&r);
            (self.x, self.r) = (x, r);
            if beta <= target {
                out.converged = true;
                break;
            }
            if !beta.is_finite() {
                break;
            }
        }
        b[..n].copy_from_slice(&self.x);
        out
    }

    /// One GMRES cycle from the residual in `r` (norm `beta`): builds the Krylov basis of
    /// `M P^{-1}` until the least-squares residual is at most `target` or `RESTART` vectors;
    /// or the deadline passes; returns the number of steps taken (the Hessenberg matrix and `g` hold the reduced problem,
    /// triangularised by Givens rotations).
    fn arnoldi_cycle(&mut self, beta: f64, target: f64, iterations: &mut usize, deadline: &Deadline) -> usize {
        let n = self.size;
        let m1 = self.restart + 1;
        for (v, r) in self.basis[..n].iter_mut().zip(&self.r) {
            *v = r / beta;
        }
        self.g.iter_mut().for_each(|v| *v = 0.0);
        self.g[0] = beta;
        for j in 0..self.restart {
            *iterations += 1;
            self.z.copy_from_slice(&self.basis[j * n..(j + 1) * n]);
            let z = std::mem::take(&mut self.z);
            let mut w = std::mem::take(&mut self.w);
            let mut zp = z;
            self.precondition(&mut zp);
            self.matvec(&zp, &mut w);
            // modified Gram-Schmidt, each update fused with the next inner product (or, after
            // the last, with the norm): one pass over w per basis vector
            let col = &mut self.hess[j * m1..(j + 1) * m1];
            let mut d = dot(&w, &self.basis[..n]);
            for (i, h) in col.iter_mut().enumerate().take(j + 1) {
                *h = d;
                let v = &self.basis[i * n..(i + 1) * n];
                let next = (i < j).then(|| &self.basis[(i + 1) * n..(i + 2) * n]);
                d = axpy_dot(&mut w, d, v, next);
            }
            let hn = d.sqrt();
            col[j + 1] = hn;
            if hn > 0.0 {
                for (v, w) in self.basis[(j + 1) * n..(j + 2) * n].iter_mut().zip(&w) {
                    *v = w / hn;
                }
            }
            (self.z, self.w) = (zp, w);
            // previous rotations, then the one that zeroes h[j+1][j]
            let col = &mut self.hess[j * m1..(j + 1) * m1];
            for i in 0..j {
                let (a, b) = (col[i], col[i + 1]);
                col[i] = self.cs[i] * a + self.sn[i] * b;
                col[i + 1] = -self.sn[i] * a + self.cs[i] * b;
            }
            let (a, b) = (col[j], col[j + 1]);
            let rho = a.hypot(b);
            let (c, s) = if rho == 0.0 { (1.0, 0.0) } else { (a / rho, b / rho) };
            (self.cs[j], self.sn[j]) = (c, s);
            col[j] = rho;
            col[j + 1] = 0.0;
            self.g[j + 1] = -s * self.g[j];
            self.g[j] *= c;
            if self.g[j + 1].abs() <= target || hn == 0.0 || !rho.is_finite() || deadline.expired() {
                return j + 1;
            }
        }
        self.restart
    }

    /// `x <- x + P^{-1} V_k y` with `y` the solution of the triangularised `k x k` problem.
    fn update_iterate(&mut self, k: usize) {
        let (n, m1) = (self.size, self.restart + 1);
        // back substitution in place in g
        for i in (0..k).rev() {
            let mut s = self.g[i];
            for j in i + 1..k {
                s -= self.hess[j * m1 + i] * self.g[j];
            }
            let d = self.hess[i * m1 + i];
            self.g[i] = if d != 0.0 { s / d } else { 0.0 };
        }
        self.z.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..k {
            let y = self.g[j];
            self.z.iter_mut().zip(&self.basis[j * n..(j + 1) * n]).for_each(|(z, v)| *z += y * v);
        }
        let mut z = std::mem::take(&mut self.z);
        self.precondition(&mut z);
        self.x.iter_mut().zip(&z).for_each(|(x, z)| *x += z);
        self.z = z;
    }
}

/// The ILU(k) pattern of a CSR pattern (columns sorted, diagonal present): row pointers,
/// sorted columns and the position of each diagonal (Saad 2003, Algorithm 10.6: the level of
/// a fill entry made from `(i, q)` and `(q, j)` is `lev(i, q) + lev(q, j) + 1`), keeping the
/// entries of level `<= levels[0]` in rows before `tail_start`, `<= levels[1]` from there on.
/// `None` when `deadline` passes first (checked every 1024 rows).
type IluPattern = (Vec<usize>, Vec<usize>, Vec<usize>);
fn symbolic_iluk(
    size: usize,
    ptr: &[usize],
    col: &[u32],
    levels: [usize; 2],
    tail_start: usize,
    deadline: &Deadline,
) -> Option<IluPattern> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut f_ptr = vec![0usize];
    let (mut f_col, mut f_lev, mut f_diag) = (Vec::new(), Vec::new(), Vec::with_capacity(size));
    let mut lev = vec![usize::MAX; size];
    let mut cols: Vec<usize> = Vec::new();
    let mut heap = BinaryHeap::new();
    for i in 0..size {
        if i % 1024 == 0 && deadline.expired() {
            return None;
        }
        let level = levels[usize::from(i >= tail_start)];
        for j in col[ptr[i]..ptr[i + 1]].iter().map(|&j| j as usize) {
            lev[j] = 0;
            cols.push(j);
            if j < i {
                heap.push(Reverse(j));
            }
        }
        if lev[i] == usize::MAX {
            lev[i] = 0;
            cols.push(i);
        }
        while let Some(Reverse(q)) = heap.pop() {
            let lq = lev[q];
            // the U part of row q (its stored levels)
            let ud = f_diag[q];
            for s in ud + 1..f_ptr[q + 1] {
                let (j, lj) = (f_col[s], f_lev[s]);
                let l = lq + lj + 1;
                if l <= level && l < lev[j] {
                    if lev[j] == usize::MAX {
                        cols.push(j);
                        if j < i {
                            heap.push(Reverse(j));
                        }
                    }
                    lev[j] = l;
                }
            }
        }
        cols.sort_unstable();
        for &j in &cols {
            if j == i {
                f_diag.push(f_col.len());
            }
            f_col.push(j);
            f_lev.push(lev[j]);
            lev[j] = usize::MAX;
        }
        cols.clear();
        f_ptr.push(f_col.len());
    }
    Some((f_ptr, f_col, f_diag))
}

/// `sum_q vals[q] v[cols[q]]` in four lanes (independent dependency chains: a row of a
/// triangular solve waits on the rows before it, so its own sum should not be one long chain).
/// Values in `f64` (the matrix) or `f32` (the incomplete factors), summed in `f64`.
#[inline]
fn sparse_dot<T: Copy + Into<f64>>(vals: &[T], cols: &[u32], v: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (v4, c4) = (vals.chunks_exact(4), cols.chunks_exact(4));
    let rest: f64 = v4.remainder().iter().zip(c4.remainder()).map(|(&a, &c)| a.into() * v[c as usize]).sum();
    for (a, c) in v4.zip(c4) {
        for l in 0..4 {
            s[l] += a[l].into() * v[c[l] as usize];
        }
    }
    (s[0] + s[1]) + (s[2] + s[3]) + rest
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    // four lanes: independent dependency chains
    let mut s = [0.0f64; 4];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let rest: f64 = a4.remainder().iter().zip(b4.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a4.zip(b4) {
        for l in 0..4 {
            s[l] += x[l] * y[l];
        }
    }
    s[0] + s[1] + s[2] + s[3] + rest
}

/// `w <- w - d v` and then `dot(w, next)` of the updated `w` (`dot(w, w)` when `next` is
/// `None`), in one pass over `w`: the same operations in the same order as the update followed
/// by [`dot`], so the same numbers.
#[inline]
fn axpy_dot(w: &mut [f64], d: f64, v: &[f64], next: Option<&[f64]>) -> f64 {
    let mut s = [0.0f64; 4];
    let split = w.len() - w.len() % 4;
    let lanes = w[..split].chunks_exact_mut(4).zip(v.chunks_exact(4));
    match next {
        Some(u) => {
            for ((w, v), u) in lanes.zip(u.chunks_exact(4)) {
                for l in 0..4 {
                    w[l] -= d * v[l];
                    s[l] += w[l] * u[l];
                }
            }
        }
        None => {
            for (w, v) in lanes {
                for l in 0..4 {
                    w[l] -= d * v[l];
                    s[l] += w[l] * w[l];
                }
            }
        }
    }
    w[split..].iter_mut().zip(&v[split..]).for_each(|(w, v)| *w -= d * v);
    let w: &[f64] = w;
    let u = next.unwrap_or(w);
    let rest: f64 = w[split..].iter().zip(&u[split..]).map(|(x, y)| x * y).sum();
    s[0] + s[1] + s[2] + s[3] + rest
}

#[inline]
fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1-D convection-diffusion matrix (tridiagonal, not symmetric) plus a dense last row
    /// and column (a border): GMRES with ILU(1) recovers a known solution.
    #[test]
    fn gmres_with_ilu_recovers_a_known_solution() {
        let n = 300;
        let mut entries = Vec::new();
        for i in 0..n - 1 {
            entries.push((i, i, 2.5));
            if i > 0 {
                entries.push((i, i - 1, -1.3));
            }
            if i + 2 < n {
                entries.push((i, i + 1, -0.7));
            }
            entries.push((i, n - 1, 0.01 * ((i % 7) as f64 - 3.0)));
            entries.push((n - 1, i, 1.0 / (1 + i) as f64));
        }
        entries.push((n - 1, n - 1, -1.0));
        entries.sort_by_key(|&(r, c, _)| (c, r));
        let mut col_ptr = vec![0usize; n + 1];
        entries.iter().for_each(|&(_, c, _)| col_ptr[c + 1] += 1);
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        let rows: Vec<usize> = entries.iter().map(|e| e.0).collect();
        let vals: Vec<f64> = entries.iter().map(|e| e.2).collect();
        let mut it = IluGmres::new(n, &col_ptr, &rows, 1);
        assert_eq!(it.factor(&vals, &Deadline::none()), Ok(true));
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.1).sin()).collect();
        let mut b = vec![0.0; n];
        for &(r, c, v) in &entries {
            b[r] += v * xs[c];
        }
        let out = it.solve(&mut b, 1e-13, &Deadline::none());
        assert!(out.converged && out.iterations < 60, "{out:?}");
        let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-11, "{err}");
    }
}
