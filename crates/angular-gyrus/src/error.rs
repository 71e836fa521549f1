//! The one error type of the `angular-gyrus` crate.
//!
//! Most failures are the core's ([`maxim_core::Error`]: an out-of-range number, an unknown
//! id, a corrupt snapshot) and arrive wrapped in [`Error::Core`]; the variants here are the
//! failures only a mathematical layer knows: data a computation cannot use (too short,
//! constant, not finite, of mismatched lengths) and operations without a defined result.
//! Every error leaves the layer as it was, and no error is ever turned into a stored NaN.
//!
//! ```
//! use angular_gyrus::{AngularGyrus, Error};
//! use maxim_core::RecordId;
//! let mut ag = AngularGyrus::builder().build()?;
//! let err = ag.remove_record(RecordId::from_u128(7)).unwrap_err();
//! assert!(err.is_not_found());
//! let err = angular_gyrus::fit::fit_trend(&[0.0, 1.0, 2.0], &[1.0, f64::NAN, 2.0]).unwrap_err();
//! assert!(matches!(err, Error::NonFinite { index: 1, .. }));
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use maxim_core::RecordId;

/// Errors of the mathematical layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A core error: a number out of range, an unknown id (`NotFound`), an id stored twice
    /// (`Duplicate`), a corrupt or unreadable snapshot.
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// A series or operand list is shorter than the computation needs.
    #[error("{what} needs at least {needed} values, got {got}")]
    TooShort {
        /// The computation.
        what: &'static str,
        /// Values it needs.
        needed: usize,
        /// Values given.
        got: usize,
    },
    /// A value is NaN or infinite.
    #[error("{what}: value {index} is not finite ({value})")]
    NonFinite {
        /// The input it was found in.
        what: &'static str,
        /// Its position.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Two inputs that must be as long as each other are not.
    #[error("{what}: lengths differ ({left} and {right})")]
    LengthMismatch {
        /// The computation.
        what: &'static str,
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// The series (or the times) do not vary, so the fit has no defined answer.
    #[error("{what}: the {input} do not vary")]
    Constant {
        /// The computation.
        what: &'static str,
        /// Which input is constant (`values`, `times`).
        input: &'static str,
    },
    /// The design of a fit is singular (for a cosinor: the times do not cover the cycle).
    #[error("{what}: the design is singular (the times do not determine the fit)")]
    Singular {
        /// The computation.
        what: &'static str,
    },
    /// An exact operation has no finite result (division by zero, modulo zero, overflow).
    #[error("{operation} has no finite result for these operands")]
    Undefined {
        /// The operation.
        operation: &'static str,
    },
    /// An operation or method name that this layer does not know.
    #[error("unknown {kind} {name:?}")]
    Unknown {
        /// What was looked up (`operation`, `method`, `category`).
        kind: &'static str,
        /// The name given.
        name: String,
    },
    /// A name (record name, domain, metric) is empty or too long.
    #[error("{field} must be 1 to {max} bytes of text, got {len} bytes")]
    BadName {
        /// Which name.
        field: &'static str,
        /// The longest allowed.
        max: usize,
        /// Its length.
        len: usize,
    },
    /// Built-in records are firmware: they are never removed or replaced.
    #[error("record {id} is a built-in and cannot be removed or replaced")]
    BuiltIn {
        /// The record.
        id: RecordId,
    },
    /// The operation needs the full record and this one was compressed by consolidation.
    #[error("record {id} is compressed")]
    Compressed {
        /// The record.
        id: RecordId,
    },
    /// The store holds `max_records` records and refuses another.
    #[error("the store is full ({max} records)")]
    Full {
        /// The capacity.
        max: usize,
    },
}

impl Error {
    /// True when the error says that a record id is unknown.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::NotFound { .. }))
    }

    /// True when the error says that an id was stored twice.
    pub fn is_duplicate(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::Duplicate { .. }))
    }

    pub(crate) fn out_of_range(field: &'static str, value: f64, expected: &'static str) -> Self {
        Self::Core(maxim_core::Error::OutOfRange { field, value, expected })
    }

    pub(crate) fn not_found(id: RecordId) -> Self {
        Self::Core(maxim_core::Error::NotFound { id })
    }
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself (so a hub sees `NotFound`, `Corrupt`, ... whatever
    /// layer it asked); the layer's own errors arrive as [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: "angular_gyrus", source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks that every value of `values` is finite.
pub(crate) fn check_all_finite(what: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(Error::NonFinite { what, index, value: values[index] }),
        None => Ok(()),
    }
}
