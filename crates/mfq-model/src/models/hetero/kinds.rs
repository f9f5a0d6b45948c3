//! The heterogeneous-server kinds as the registry declares them: `sa-jsq`, `sa-jiq`, `pull`,
//! `ps-sq2`, `static-routing` (models in the sibling modules; docs/models/heterogeneous.md).

use super::{CostRule, PsSq2, Pull, Sampling, ServerClass, SpeedAware, StaticRouting};
use crate::finite::{ClassPolicy, FiniteSystem, Simulation};
use crate::models::params::{CLASSES, HETERO_LAMBDA};
use crate::registry::{read_spec, Kind, KindSpec, Param};
use crate::{MeanFieldModel, ModelError};
use serde::{Deserialize, Serialize};

/// `kind = "sa-jsq"`, `"sa-jiq"`, `"pull"` or `"static-routing"`: an arrival rate and the
/// server classes. The kind is the type parameter's [`ClassKind`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassesSpec<P: ClassKind> {
    /// Arrival rate per server.
    pub lambda: f64,
    /// `[[model.classes]]`: fraction and speed of each class.
    pub classes: Vec<ServerClass>,
    /// Which policy (no key in the file).
    #[serde(skip)]
    pub policy: P,
}

/// The routing policy of a [`ClassesSpec`]: one zero-sized type per kind.
pub trait ClassKind: Default + Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The kind's declaration.
    const KIND: &'static Kind;
    /// The model at `levels` = K.
    ///
    /// # Errors
    /// The model's own [`ModelError::OutOfRange`].
    fn build(lambda: f64, classes: &[ServerClass], levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError>;
    /// The simulated routing rule.
    fn policy() -> ClassPolicy;
}

macro_rules! class_kind {
    ($(#[$doc:meta])* $ty:ident, $kind:ident, $policy:expr, |$l:ident, $c:ident, $k:ident| $build:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct $ty;
        impl ClassKind for $ty {
            const KIND: &'static Kind = &$kind;
            fn build($l: f64, $c: &[ServerClass], $k: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
                Ok(Box::new($build?))
            }
            fn policy() -> ClassPolicy {
                $policy
            }
        }
    };
}

class_kind!(
    /// Speed-aware JSQ, see [`SpeedAware::jsq`].
    SaJsqPolicy, SA_JSQ, ClassPolicy::SaJsq, |l, c, k| SpeedAware::jsq(l, c, k)
);
class_kind!(
    /// Speed-aware JIQ, see [`SpeedAware::jiq`].
    SaJiqPolicy, SA_JIQ, ClassPolicy::SaJiq, |l, c, k| SpeedAware::jiq(l, c, k)
);
class_kind!(
    /// Stolyar's PULL, see [`Pull`].
    PullPolicy, PULL, ClassPolicy::Pull, |l, c, k| Pull::new(l, c, k)
);
class_kind!(
    /// The optimal static routing, see [`StaticRouting`].
    StaticPolicy, STATIC_ROUTING, ClassPolicy::Static, |l, c, k| StaticRouting::new(l, c, k)
);

/// `kind = "sa-jsq"`.
pub type SaJsqSpec = ClassesSpec<SaJsqPolicy>;
/// `kind = "sa-jiq"`.
pub type SaJiqSpec = ClassesSpec<SaJiqPolicy>;
/// `kind = "pull"`.
pub type PullSpec = ClassesSpec<PullPolicy>;
/// `kind = "static-routing"`.
pub type StaticRoutingSpec = ClassesSpec<StaticPolicy>;

impl<P: ClassKind> ClassesSpec<P> {
    /// The parameters of kind `P`.
    pub fn new(lambda: f64, classes: Vec<ServerClass>) -> Self {
        ClassesSpec { lambda, classes, policy: P::default() }
    }
}

impl<P: ClassKind> KindSpec for ClassesSpec<P> {
    fn kind(&self) -> &'static Kind {
        P::KIND
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        P::build(self.lambda, &self.classes, levels)
    }
    /// The simulator applies the model's own range checks to the classes first.
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Classes { lambda: self.lambda, classes: self.classes.clone(), policy: P::policy() }))
    }
}

/// `kind = "ps-sq2"`: the parameters of [`PsSq2`] in a model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PsSq2Spec {
    /// Arrival rate per server.
    pub lambda: f64,
    /// `[[model.classes]]`: fraction and speed (capacity `C_j`) of each class.
    pub classes: Vec<ServerClass>,
    /// Class sampling probabilities (default `"uniform"`).
    #[serde(default)]
    pub sampling: Sampling,
    /// Cost compared (default `"sq2"`).
    #[serde(default)]
    pub rule: CostRule,
}

impl KindSpec for PsSq2Spec {
    fn kind(&self) -> &'static Kind {
        &PS_SQ2
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(PsSq2::new(self.lambda, &self.classes, self.sampling.clone(), self.rule, levels)?))
    }
    /// Heterogeneous PS routing: start where most fixed points fit (class-tail states are not
    /// warm-started level by level when K grows).
    fn initial_levels(&self) -> usize {
        64
    }
    /// The simulator applies the model's own range checks to the classes first.
    fn simulation(&self) -> Result<Simulation, ModelError> {
        let policy = ClassPolicy::PsSq2 { sampling: self.sampling.clone(), rule: self.rule };
        Ok(Simulation::System(FiniteSystem::Classes { lambda: self.lambda, classes: self.classes.clone(), policy }))
    }
}

/// The `sa-jsq` kind.
pub static SA_JSQ: Kind = Kind {
    name: "sa-jsq",
    title: "Speed-aware JSQ (shortest queue, ties to the fastest class), heterogeneous server classes",
    params: &[HETERO_LAMBDA, CLASSES],
    sources: "Bhambay, Mukhopadhyay, Perf. Eval. 2022, arXiv 2203.01721 (fixed point and reduced ODE derived)",
    example: "models/hetero-sa-jsq-caseA.toml",
    docs: "docs/models/heterogeneous.md",
    read: read_spec::<SaJsqSpec>,
};

/// The `sa-jiq` kind.
pub static SA_JIQ: Kind = Kind {
    name: "sa-jiq",
    title: "Speed-aware JIQ (idle server of the fastest class, else a random server), heterogeneous server classes",
    params: &[HETERO_LAMBDA, CLASSES],
    sources: "derived (docs/models/heterogeneous.md); fallback rule ours: the SA-JIQ paper could not be identified",
    example: "models/hetero-sa-jiq-caseA.toml",
    docs: "docs/models/heterogeneous.md",
    read: read_spec::<SaJiqSpec>,
};

/// The `pull` kind.
pub static PULL: Kind = Kind {
    name: "pull",
    title: "Stolyar's PULL (uniform among idle servers of every class), heterogeneous server classes",
    params: &[HETERO_LAMBDA, CLASSES],
    sources: "Stolyar, Queueing Syst. 80(4), 2015, arXiv 1407.6343 (ODE and fixed point derived)",
    example: "models/hetero-pull-caseB.toml",
    docs: "docs/models/heterogeneous.md",
    read: read_spec::<PullSpec>,
};

/// The `ps-sq2` kind.
pub static PS_SQ2: Kind = Kind {
    name: "ps-sq2",
    title: "Randomised SQ(2)-type routing on heterogeneous processor-sharing servers (ties at random)",
    params: &[
        HETERO_LAMBDA,
        Param {
            name: "classes",
            meaning: "[[model.classes]] tables: fraction (gamma_j) and speed (capacity C_j)",
            unit: "capacity in jobs per mean job size",
            allowed: "1..16 classes; fractions in (0, 1] summing to 1; speed in [1e-6, 1e6]",
            default: None,
            range: None,
        },
        Param {
            name: "sampling",
            meaning: "class sampling probabilities p_j of each of the two samples",
            unit: "",
            allowed: "\"uniform\" (default, p = gamma), \"capacity\" (p_j ~ gamma_j C_j) or [p_1, ..., p_M] summing to 1",
            default: Some("\"uniform\""),
            range: None,
        },
        Param {
            name: "rule",
            meaning: "cost compared: \"sq2\" n (default), \"lsc\" n/C, \"lsc-plus-one\" (n+1)/C",
            unit: "",
            allowed: "sq2 | lsc | lsc-plus-one",
            default: Some("\"sq2\""),
            range: None,
        },
    ],
    sources: "Mukhopadhyay, Mazumdar, IEEE TCNS 3(2), 2016; SIGMETRICS 2014 poster; arXiv 1311.5806 (ODE derived)",
    example: "models/hetero-ps-sq2-caseA.toml",
    docs: "docs/models/heterogeneous.md",
    read: read_spec::<PsSq2Spec>,
};

/// The `static-routing` kind.
pub static STATIC_ROUTING: Kind = Kind {
    name: "static-routing",
    title: "Optimal static (probabilistic) routing over server classes, square-root rule (comparison model)",
    params: &[HETERO_LAMBDA, CLASSES],
    sources: "square-root rule (Bell, Stidham, Manag. Sci. 29(7), 1983); compared in Mukhopadhyay, Mazumdar, IEEE TCNS 2016",
    example: "models/hetero-static-caseA.toml",
    docs: "docs/models/heterogeneous.md",
    read: read_spec::<StaticRoutingSpec>,
};
