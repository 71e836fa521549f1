//! The write budget: a token bucket over the items a call writes (entities, relations,
//! observations, episodes), read on the hub's clock, so a flood of writes is refused with a
//! retry delay instead of growing the memory without bound.

use maxim_core::Timestamp;

use super::ToolError;

/// A token bucket: `burst` items at once, refilled at `rate` items a second (no limit when
/// the rate is `None`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct WriteBudget {
    rate: Option<f64>,
    burst: f64,
    tokens: f64,
    last: Timestamp,
}

impl WriteBudget {
    /// A full bucket at `now`.
    pub(super) fn new(rate: Option<f64>, burst: f64, now: Timestamp) -> Self {
        Self { rate, burst, tokens: burst, last: now }
    }

    /// Takes `items` at `now`, or refuses (nothing taken) with the wait until they fit. A
    /// call larger than the whole burst never fits and says so.
    pub(super) fn take(&mut self, items: usize, now: Timestamp) -> Result<(), ToolError> {
        let Some(rate) = self.rate else { return Ok(()) };
        let elapsed = now.secs_since(self.last).max(0.0);
        self.tokens = (self.tokens + elapsed * rate).min(self.burst);
        self.last = self.last.max(now);
        let want = items as f64;
        if want > self.burst {
            return Err(ToolError::InvalidParams(format!(
                "a call writing {items} items exceeds the write burst of {} items; split it",
                self.burst
            )));
        }
        if want > self.tokens {
            return Err(ToolError::RateLimited {
                limit: format!("{rate} items a second, bursts of {}", self.burst),
                retry_after_secs: (want - self.tokens) / rate,
            });
        }
        self.tokens -= want;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_micros((1_700_000_000_000 + ms) * 1000)
    }

    #[test]
    fn a_burst_then_the_rate() {
        let mut b = WriteBudget::new(Some(10.0), 20.0, at(0));
        assert!(b.take(20, at(0)).is_ok());
        let Err(ToolError::RateLimited { retry_after_secs, .. }) = b.take(5, at(0)) else {
            panic!("the bucket is empty")
        };
        assert!((retry_after_secs - 0.5).abs() < 1e-9);
        // Half a second later five items fit, and no more.
        assert!(b.take(5, at(500)).is_ok());
        assert!(b.take(1, at(500)).is_err());
        // Refilling stops at the burst.
        assert!(b.take(20, at(60_000)).is_ok());
        assert!(b.take(1, at(60_000)).is_err());
    }

    #[test]
    fn a_refused_call_takes_nothing() {
        let mut b = WriteBudget::new(Some(1.0), 10.0, at(0));
        assert!(b.take(8, at(0)).is_ok());
        assert!(b.take(3, at(0)).is_err());
        assert!(b.take(2, at(0)).is_ok());
    }

    #[test]
    fn a_call_larger_than_the_burst_never_fits() {
        let mut b = WriteBudget::new(Some(100.0), 10.0, at(0));
        assert!(matches!(b.take(11, at(1_000_000)), Err(ToolError::InvalidParams(_))));
        assert!(b.take(10, at(1_000_000)).is_ok());
    }

    #[test]
    fn no_rate_no_limit() {
        let mut b = WriteBudget::new(None, 1.0, at(0));
        assert!(b.take(1_000_000, at(0)).is_ok());
    }

    #[test]
    fn a_clock_going_back_adds_nothing() {
        let mut b = WriteBudget::new(Some(10.0), 10.0, at(10_000));
        assert!(b.take(10, at(10_000)).is_ok());
        assert!(b.take(1, at(0)).is_err());
    }
}
