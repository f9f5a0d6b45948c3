//! The compiled model: its data, the accessors, and the [`MeanFieldModel`] implementation
//! (drift and Jacobian run the compiled programs; see `program.rs`).

use super::flat::FlatRates;
use super::node::Node;
use super::program::{with_scratch, Block, CHUNK};
use crate::{AnalyticJacobian, IndexedTransitions, TransitionVisitor, Transitions};
use crate::{Jacobian, MeanFieldModel, NamedState, Observables, PartialOrder, Sparsity, Stability, StateLayout};

/// A model given by its transitions in a model file (`kind = "generic"`), compiled.
///
/// State: the scalar variables in declared order, then each family `x[a..b]` in order,
/// without the variables eliminated by conservation laws (see [`GenericModel::state_names`]).
/// Drift `f(x) = sum_l l beta_l(x)`; the Jacobian is the symbolic derivative (exact), with
/// the sparsity of the transitions. See the module docs and docs/models/generic.md.
///
/// Source: the density-dependent population processes of Kurtz ("Solutions of ordinary
/// differential equations as limits of pure jump Markov processes", J. Appl. Prob. 7(1), 1970)
/// in the form of rmf_tool's DDPP class (Gast, Allmeier, Van Houdt).
///
/// ```
/// use mfq_model::{MeanFieldModel, ModelFile};
/// let text = r#"
/// [model]
/// kind = "generic"
/// variables = ["S", "I"]
/// [model.parameters]
/// beta = 2.0
/// [[model.transitions]]
/// jump = { S = -1, I = 1 }
/// rate = "(0.1 + beta * I) * S"
/// [[model.transitions]]
/// jump = { S = 1, I = -1 }
/// rate = "I"
/// [[model.conservation]]
/// sum = ["S", "I"]
/// value = 1.0
/// "#;
/// let file = ModelFile::parse(text, &[]).unwrap();
/// let m = file.model.build(1).unwrap();
/// let mut dx = [0.0; 2];
/// m.drift(&[0.5, 0.5], &mut dx);
/// assert!((dx[0] - (-(0.1 + 1.0) * 0.5 + 0.5)).abs() < 1e-15);
/// ```
#[derive(Debug, Clone)]
pub struct GenericModel {
    pub(super) name: String,
    pub(super) names: Vec<String>,
    pub(super) layout: StateLayout,
    pub(super) params: Vec<(String, f64)>,
    /// Jumps of every transition instance: `jumps[jump_ptr[i]..jump_ptr[i + 1]]`.
    pub(super) jumps: Vec<(usize, f64)>,
    pub(super) jump_ptr: Vec<usize>,
    pub(super) drift_blocks: Vec<Block>,
    /// The rates one instance at a time (for the population process's simulator).
    pub(super) flat: FlatRates,
    /// `(instance, column)` of each Jacobian item.
    pub(super) jac_items: Vec<(u32, u32)>,
    pub(super) jac_blocks: Vec<Block>,
    pub(super) sparsity: Sparsity,
    pub(super) scratch: usize,
    pub(super) observe: Observe,
    pub(super) laws: Vec<Law>,
    pub(super) initial: Option<Vec<f64>>,
    pub(super) order: Option<PartialOrder>,
    /// Where each transition instance is declared (`model.transitions[0] (infect) at k = 3`)
    /// and its rate expression in quotes, for messages.
    pub(super) labels: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub(super) struct Law {
    /// Slots of the kept members.
    pub(super) kept: Vec<usize>,
    pub(super) value: f64,
    /// `S + I + R = 1 (model.conservation[0])`, as declared.
    pub(super) label: String,
    /// The kept members' names (`S + I`; a long family shortened).
    pub(super) kept_names: String,
    /// The eliminated member's name.
    pub(super) eliminated: String,
}

#[derive(Debug, Clone)]
pub(super) struct Observe {
    pub(super) tail: Option<Vec<Node>>,
    pub(super) arrival_rate: Option<f64>,
    pub(super) loss: Option<Node>,
    pub(super) prob_wait: Option<Node>,
    pub(super) extras: Vec<(String, Node)>,
}

impl GenericModel {
    /// Evaluates every transition rate at `x`: `f(instance, rate)`.
    pub(super) fn for_each_rate(&self, x: &[f64], f: &mut dyn FnMut(usize, f64)) {
        with_scratch(self.scratch, |regs| {
            for b in &self.drift_blocks {
                for l0 in (0..b.lanes()).step_by(CHUNK) {
                    let w = CHUNK.min(b.lanes() - l0);
                    let out = b.run(x, regs, l0, w);
                    for (r, &item) in out.iter().zip(&b.items[l0..l0 + w]) {
                        f(item as usize, *r);
                    }
                }
            }
        });
    }

    /// Names of the state entries (`S`, `x[3]`), in state order.
    pub fn state_names(&self) -> &[String] {
        &self.names
    }

    /// Parameter names and values (after `--set` and the truncation level).
    pub fn parameters(&self) -> &[(String, f64)] {
        &self.params
    }

    /// The declared initial state (`[model.initial]`), if any.
    pub fn initial_state(&self) -> Option<&[f64]> {
        self.initial.as_deref()
    }

    /// Number of transitions after unrolling `for` (zero-rate ones dropped).
    pub fn transition_count(&self) -> usize {
        self.jump_ptr.len() - 1
    }

    /// Number of compiled vectorised programs (drift, Jacobian): a measure of how well the
    /// transitions vectorise.
    pub fn program_count(&self) -> (usize, usize) {
        (self.drift_blocks.len(), self.jac_blocks.len())
    }
}

impl MeanFieldModel for GenericModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dim(&self) -> usize {
        self.names.len()
    }

    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx.fill(0.0);
        let (jumps, ptr) = (&self.jumps, &self.jump_ptr);
        self.for_each_rate(x, &mut |i, r| {
            for &(s, c) in &jumps[ptr[i]..ptr[i + 1]] {
                dx[s] += c * r;
            }
        });
    }

    fn layout(&self) -> StateLayout {
        self.layout.clone()
    }

    fn observables(&self, x: &[f64]) -> Observables {
        let o = &self.observe;
        let extras: Vec<(String, f64)> = o.extras.iter().map(|(n, e)| (n.clone(), e.eval(x))).collect();
        let Some(tail) = &o.tail else {
            return Observables::extras_only(extras);
        };
        let t: Vec<f64> = tail.iter().map(|e| e.eval(x)).collect();
        let loss = o.loss.as_ref().map_or(0.0, |e| e.eval(x));
        let prob_wait = o.prob_wait.as_ref().map(|e| e.eval(x));
        let mut obs = match o.arrival_rate {
            Some(lambda) => Observables::from_tail(&t, lambda, prob_wait, loss),
            None => {
                let mut obs = Observables::from_tail(&t, 0.0, prob_wait, loss);
                obs.throughput = None;
                obs
            }
        };
        obs.extras = extras;
        obs
    }

    fn order(&self) -> Option<PartialOrder> {
        self.order
    }

    fn extremal_states(&self) -> Vec<NamedState> {
        let n = self.dim();
        let mut out = Vec::new();
        for (name, v) in [("empty", 0.0), ("full", 1.0)] {
            let mut x = vec![v; n];
            self.project(&mut x);
            out.push(NamedState { name: name.into(), x });
        }
        if let Some(x) = &self.initial {
            out.push(NamedState { name: "initial".into(), x: x.clone() });
        }
        out
    }

    /// Clamps every entry to `[0, 1]`, then scales the kept members of a conservation law
    /// down when they exceed the conserved value (so that the eliminated variable is `>= 0`),
    /// or moves them up towards 1 when they sum to less than the value minus 1 (a law whose
    /// value is above 1: so that the eliminated variable is `<= 1`). Both maps keep the order
    /// of the entries (a tail family stays non-increasing).
    fn project(&self, x: &mut [f64]) {
        x.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0));
        for law in &self.laws {
            let s: f64 = law.kept.iter().map(|&i| x[i]).sum();
            if s > law.value && s > 0.0 {
                let f = law.value.max(0.0) / s;
                law.kept.iter().for_each(|&i| x[i] *= f);
            } else if s < law.value - 1.0 {
                // room left below 1 (law values are at most the number of members)
                let room = law.kept.len() as f64 - s;
                let f = if room > 0.0 { ((law.value - 1.0 - s) / room).min(1.0) } else { 0.0 };
                law.kept.iter().for_each(|&i| x[i] += (1.0 - x[i]) * f);
            }
        }
    }

    fn conservation_laws(&self) -> Vec<crate::ConservationLaw> {
        self.laws
            .iter()
            .map(|l| crate::ConservationLaw {
                label: l.label.clone(),
                kept: l.kept.clone(),
                kept_names: l.kept_names.clone(),
                eliminated: Some(l.eliminated.clone()),
                value: l.value,
            })
            .collect()
    }

    fn stability(&self) -> Stability {
        Stability::Unknown {
            note: "generic model: no stability condition is known; the solvers watch the residual and the mass at the truncation level"
                .into(),
        }
    }

    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for GenericModel {
    fn sparsity(&self) -> Sparsity {
        self.sparsity.clone()
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        self.for_each_rate_derivative(x, |inst, col, d| {
            for &(s, c) in &self.jumps[self.jump_ptr[inst]..self.jump_ptr[inst + 1]] {
                jac.add(s, col, c * d);
            }
        });
    }
}

impl GenericModel {
    /// Calls `f(instance, column, d rate / d x_column)` for every Jacobian item of every
    /// transition instance at `x` (the items [`jacobian`](AnalyticJacobian::jacobian) sums):
    /// for the Jacobian (which adds them along the jumps) and for the checks of the model file.
    /// Generic over `f`, so the Jacobian's loop is monomorphised and allocates nothing.
    pub(super) fn for_each_rate_derivative(&self, x: &[f64], mut f: impl FnMut(usize, usize, f64)) {
        with_scratch(self.scratch, |regs| {
            for b in &self.jac_blocks {
                for l0 in (0..b.lanes()).step_by(CHUNK) {
                    let w = CHUNK.min(b.lanes() - l0);
                    let out = b.run(x, regs, l0, w);
                    for (d, &item) in out.iter().zip(&b.items[l0..l0 + w]) {
                        let (inst, col) = self.jac_items[item as usize];
                        f(inst as usize, col as usize, *d);
                    }
                }
            }
        });
    }
}

impl Transitions for GenericModel {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        let (jumps, ptr) = (&self.jumps, &self.jump_ptr);
        self.for_each_rate(x, &mut |i, r| visit(&jumps[ptr[i]..ptr[i + 1]], r));
    }
    fn indexed(&self) -> Option<&dyn IndexedTransitions> {
        Some(self)
    }
}

impl IndexedTransitions for GenericModel {
    fn count(&self) -> usize {
        self.transition_count()
    }
    fn jump(&self, l: usize) -> &[(usize, f64)] {
        &self.jumps[self.jump_ptr[l]..self.jump_ptr[l + 1]]
    }
    fn reads(&self, l: usize) -> &[usize] {
        self.flat.reads(l)
    }
    fn rate(&self, l: usize, x: &[f64]) -> f64 {
        self.flat.rate(l, x)
    }
    fn rates(&self, ls: &[usize], x: &[f64], out: &mut [f64]) {
        self.flat.rates(ls, x, out)
    }
    fn form(&self, l: usize) -> Option<crate::RateForm> {
        self.flat.form(l)
    }
    fn label(&self, l: usize) -> Option<(String, String)> {
        self.labels.get(l).cloned()
    }
}
