//! The one error type of the `promoter` crate.
//!
//! Building a promoter, saving and loading its ledger return [`Result`]. A scan itself never
//! fails as a whole: a failing source, a malformed candidate or a store that refuses a write
//! is reported in the [`PromotionReport`](crate::PromotionReport) and the scan goes on.
//!
//! ```
//! use promoter::Error;
//! let err = Error::NoGate;
//! assert!(err.to_string().contains("randomness gate"));
//! let core: Error = maxim_core::Error::invalid("dedup_threshold", "too low").into();
//! assert!(matches!(core, Error::Core(maxim_core::Error::InvalidArgument { .. })));
//! let back: maxim_core::Error = core.into();
//! assert!(matches!(back, maxim_core::Error::InvalidArgument { .. }));
//! ```

/// Errors of the promoter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of `maxim-core`: a setting out of range, an I/O failure, a corrupt ledger
    /// file, ...
    #[error(transparent)]
    Core(#[from] maxim_core::Error),
    /// The gate is enabled ([`PromoterConfig::gate_enabled`](crate::PromoterConfig::gate_enabled))
    /// but no [`RandomnessGate`](maxim_core::RandomnessGate) was given to the builder. The
    /// original built its production promoter without a gate, so noise was never filtered;
    /// here that needs an explicit `gate_enabled = false`.
    #[error("the randomness gate is enabled but no randomness gate was given")]
    NoGate,
}

impl From<Error> for maxim_core::Error {
    /// A core error comes back as itself; the promoter's own errors arrive as
    /// [`maxim_core::Error::Layer`].
    fn from(err: Error) -> Self {
        match err {
            Error::Core(core) => core,
            other => maxim_core::Error::Layer { layer: "promoter", source: Box::new(other) },
        }
    }
}

impl Error {
    /// True when the error is a core [`NotFound`](maxim_core::Error::NotFound).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Core(maxim_core::Error::NotFound { .. }))
    }
}

/// `Result` with the crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
