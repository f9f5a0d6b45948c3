//! The finite-N systems behind the model kinds, as data: what a kind declares to the simulator.
//!
//! A kind's [`KindSpec::simulation`](crate::registry::KindSpec::simulation) names the system by
//! its rules (routing, job sizes, disciplines), never by its drift: `mfq-sim` implements each
//! [`FiniteSystem`] family from those rules alone, so that agreement between simulation and
//! mean field checks the ODEs. A new kind that runs on an existing family needs no simulator
//! code; a kind without a finite-N system says why ([`Simulation::Unsupported`]).

use crate::models::k_of_n::ServiceLaw;
use crate::models::moldable::WorkLaw;
use crate::models::redundancy::Discipline;
use crate::models::{CostRule, PhaseType, Sampling, ServerClass};

/// What the simulator does with a kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Simulation {
    /// An event-driven simulation of this system (`mfq_sim::simulate`).
    System(FiniteSystem),
    /// The density-dependent population process of the model's own transitions (Gillespie;
    /// `mfq_sim::population`): generic models, whose rules are their transitions.
    Population,
    /// No finite-N simulation, and why.
    Unsupported {
        /// The reason, one sentence.
        reason: String,
    },
}

/// How an arriving job picks a server among `N` identical unit-rate FCFS servers. Sampling is
/// uniform with replacement.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Routing {
    /// JSQ(d): `d` samples, join a least-loaded one, ties uniformly (`d = 1`: random routing).
    Jsq {
        /// Servers sampled per arrival.
        d: u32,
    },
    /// Pod with comparison errors: `d` samples; a most-loaded one with probability `eps` (when
    /// `g` is set: only if `max - min <= g` among the samples), else a least-loaded one.
    Pod {
        /// Servers sampled per arrival.
        d: u32,
        /// Error probability.
        eps: f64,
        /// Load-dependent threshold on `max - min`; `None` = load-independent errors.
        g: Option<u32>,
    },
    /// JIQ: an idle server if there is one, else a uniformly random server.
    Jiq,
}

/// How an arriving job picks a server among classes of servers of different speeds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClassPolicy {
    /// Speed-aware JSQ: shortest queue over all servers, ties to the fastest class.
    SaJsq,
    /// Speed-aware JIQ: an idle server of the fastest class that has one, else a random server.
    SaJiq,
    /// Stolyar's PULL: a uniformly random idle server, else a random server.
    Pull,
    /// The optimal static (probabilistic) routing over classes (square-root rule); the
    /// simulator computes the routing probabilities itself.
    Static,
    /// Two samples (class probabilities from `sampling`), join the one of smaller cost
    /// (`rule`), processor-sharing servers.
    PsSq2 {
        /// Class sampling probabilities.
        sampling: Sampling,
        /// The cost compared.
        rule: CostRule,
    },
}

/// A finite-N system: Poisson arrivals at rate `N lambda`, `N` servers, the rules below.
/// Time unit: the mean job size at a unit-rate server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FiniteSystem {
    /// Identical unit-rate FCFS servers, exponential(1) job sizes.
    Queues {
        /// Arrival rate per server.
        lambda: f64,
        /// The routing rule.
        routing: Routing,
    },
    /// Identical unit-rate FCFS servers, phase-type job sizes.
    PhaseQueues {
        /// Arrival rate per server.
        lambda: f64,
        /// The routing rule (`Routing::Pod` with `g = None` only).
        routing: Routing,
        /// The job-size law.
        job_size: PhaseType,
    },
    /// LL(d): `d` samples, join the one with the least workload; phase-type job sizes.
    LeastLoaded {
        /// Arrival rate per server.
        lambda: f64,
        /// Servers sampled per arrival.
        d: u32,
        /// The job-size law.
        job_size: PhaseType,
    },
    /// Server classes of given fractions and speeds, exponential job sizes.
    Classes {
        /// Arrival rate per server.
        lambda: f64,
        /// Fraction and speed of each class.
        classes: Vec<ServerClass>,
        /// The routing rule.
        policy: ClassPolicy,
    },
    /// Redundancy-d: copies of each job to `d` distinct servers, cancelled when the first
    /// finishes; i.i.d. exponential(1) copy sizes.
    Redundancy {
        /// Job arrival rate per server.
        lambda: f64,
        /// Copies per job.
        d: u32,
        /// Per-server discipline of the copies.
        discipline: Discipline,
        /// LPS(k): the `k` oldest copies share a server (only with `Discipline::Lps`).
        lps_k: Option<u32>,
    },
    /// Majority-rule opinion dynamics of `N` agents (no queues): stubborn fractions `gamma0`,
    /// `gamma1`, bias `alpha` towards opinion 1.
    Opinion {
        /// Fraction of agents stubborn with opinion 0.
        gamma0: f64,
        /// Fraction of agents stubborn with opinion 1.
        gamma1: f64,
        /// Probability that an update adopts opinion 1 outright.
        alpha: f64,
    },
    /// Batch processing in a closed network (no Poisson arrivals): `N` servers, `round(alpha N)`
    /// clients thinking Exp(`think_rate`) times, one central FIFO queue; a free server takes
    /// exactly `b` waiting jobs and serves them in an exponential time of mean `batch_time`.
    Batch {
        /// Clients per server.
        alpha: f64,
        /// Rate at which a thinking client submits its job.
        think_rate: f64,
        /// Batch size.
        b: usize,
        /// Mean service time of a batch, `h(b) = b / s(b)`.
        batch_time: f64,
    },
    /// Redundancy on a compatibility graph (no `N`: the graph fixes the servers): job types with
    /// Poisson rates `lambda[c]`, each replicated to the servers of the bit mask `sets[c]` (bit
    /// `s` for server `s + 1`); server `s` serves, FCFS, the oldest job present whose type is
    /// compatible with it, at rate `mu[s]`; the first copy to complete removes the job and its
    /// other copies. Exponential copy sizes.
    RedundancyGraph {
        /// Arrival rate of each job type.
        lambda: Vec<f64>,
        /// Server set of each job type, a bit mask.
        sets: Vec<u64>,
        /// Rate of each server.
        mu: Vec<f64>,
    },
    /// Moldable jobs with blocking: Poisson arrivals at rate `N lambda`, a job draws `k`
    /// servers with probability `p[k - 1]` and holds them for `work / s(k)`; it is blocked when
    /// fewer than `k` servers are idle, except that with `fallback` it then takes all the idle
    /// servers, and is blocked only when none is idle.
    Moldable {
        /// Arrival rate per server.
        lambda: f64,
        /// Speed-ups `[s(1), ..., s(d)]`.
        speedup: Vec<f64>,
        /// Allocation probabilities, `p[k - 1]` for `k` servers.
        p: Vec<f64>,
        /// Whether a job takes the idle servers when fewer than its `k` are idle.
        fallback: bool,
        /// The law of a job's work (mean 1).
        work: WorkLaw,
    },
    /// Randomised longest-queue-first (LQF(d)): `N` buffers, each with Poisson arrivals of rate
    /// `lambda`; service opportunities at total rate `N`, each sampling `d` distinct buffers
    /// uniformly and removing one packet from the longest sampled one (ties uniformly), wasted
    /// when all are empty. `d = N` is exact longest-queue-first.
    Lqf {
        /// Arrival rate per buffer.
        lambda: f64,
        /// Buffers sampled per service opportunity.
        d: u32,
    },
    /// Redundant requests, k of n (`models::k_of_n`): `servers` servers (the system's own size),
    /// Poisson requests at rate `servers lambda`, `n` copies each to distinct servers, served
    /// when `k` complete; the other copies are removed, those in service holding their server
    /// for `removal`.
    KOfN {
        /// Request arrival rate per server.
        lambda: f64,
        /// Number of servers.
        servers: u32,
        /// Copies needed.
        k: u32,
        /// Copies sent.
        n: u32,
        /// One central FCFS buffer (`true`) or the FCFS queues of `n` random servers.
        central: bool,
        /// Copy service-time law (mean 1).
        service: ServiceLaw,
        /// Removal time of a copy in service.
        removal: f64,
    },
}
