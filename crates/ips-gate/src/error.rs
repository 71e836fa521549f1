//! The one error type of the `ips-gate` crate.
//!
//! ```
//! use ips_gate::Error;
//! let err = Error::NonFinite { field: "values", index: 3, value: f64::NAN };
//! assert_eq!(err.to_string(), "values[3] is NaN, not a finite number");
//! let core: Error = maxim_core::Error::invalid("threshold", "bad").into();
//! assert!(matches!(core, Error::Core(_)));
//! ```

/// Errors of the randomness gate and the number-sense functions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of `maxim-core` (a setting out of range, ...).
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// A value of a series is NaN or infinite.
    #[error("{field}[{index}] is {value}, not a finite number")]
    NonFinite {
        /// The series.
        field: &'static str,
        /// The position of the value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// The function needs at least one value.
    #[error("{field} is empty")]
    Empty {
        /// The series.
        field: &'static str,
    },
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself; the gate's own errors arrive as
    /// [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: "ips-gate", source: Box::new(other) },
        }
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks that every value of `values` is finite.
pub(crate) fn check_series(field: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(Error::NonFinite { field, index, value: values[index] }),
        None => Ok(()),
    }
}
