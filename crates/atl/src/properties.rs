//! Concept properties as sourced claims, and the contradictions between them.
//!
//! Seed 004: contradictions are surfaced, not silently overwritten. A property is not one
//! value but the set of [`Claim`]s made about it, at most one per [`Source`], each with the
//! source's trust and the time it was made:
//!
//! - the same source restating a property supersedes its own older claim;
//! - another source claiming the same value corroborates it (both claims are kept);
//! - another source claiming a different value adds its claim next to the others: the property
//!   (and so its concept) is then *contested*, and the write reports a [`Contradiction`].
//!
//! Reads ask for the [`current`](Property::current) value (highest trust, then newest, then
//! the claim made last) or for every claim. A contradiction stays open until a caller resolves
//! it explicitly, by retracting a claim or accepting one value.
//!
//! Values are compared by [`same_value`]: numbers by their value, so `Int(1)` and
//! `Float(1.0)` are the same claim. A value holding a NaN or an infinity anywhere is refused
//! (NaN equals nothing, not even itself, so it would contradict every claim, its own source's
//! restatement included), and so is one nested deeper than the snapshot codec reads back
//! ([`MAX_DEPTH`]).
//!
//! ```
//! use atl::properties::{PropertyChange, Properties};
//! use maxim_core::{Source, Timestamp, Trust, value::Value};
//!
//! let t = Timestamp::from_secs(100);
//! let mut props = Properties::new();
//! let user = Source::UserStated;
//! let web = Source::Web("example.com".into());
//! let set = props.set("color", Value::from("blue"), user.clone(), Trust::new(1.0)?, t)?;
//! assert_eq!(set.change, PropertyChange::Added);
//! let set = props.set("color", Value::from("red"), web.clone(), Trust::new(0.3)?, t)?;
//! assert!(set.contested);
//! assert_eq!(props.current("color"), Some(&Value::from("blue"))); // higher trust wins
//! assert_eq!(props.get("color").unwrap().claims().len(), 2); // nothing was overwritten
//! props.retract("color", &web);
//! assert!(!props.is_contested());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use maxim_core::value::{MAX_DEPTH, Value};
use maxim_core::{RecordId, Source, Timestamp, Trust};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One source's claim about a property.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The value claimed.
    pub value: Value,
    /// Who claimed it.
    pub source: Source,
    /// How far that source is trusted for this claim.
    pub trust: Trust,
    /// When the claim was made (or last restated).
    pub at: Timestamp,
}

impl Claim {
    /// True when `self` ranks above `other` for the current value: higher trust, then newer.
    /// (Equal claims rank by position, the later one first; see [`Property::current`].)
    fn outranks(&self, other: &Self) -> bool {
        (self.trust.get(), self.at) > (other.trust.get(), other.at)
    }
}

/// Every claim made about one property of one concept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Property {
    key: String,
    /// In the order the sources first claimed; at most one per source; never empty.
    claims: Vec<Claim>,
}

impl Property {
    /// The property's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Every claim, in the order their sources first made one.
    pub fn claims(&self) -> &[Claim] {
        &self.claims
    }

    /// The claim whose value is current: the highest trust, then the newest, then the one
    /// whose source claimed last.
    pub fn current_claim(&self) -> &Claim {
        let mut best = &self.claims[0];
        for c in &self.claims[1..] {
            if !best.outranks(c) {
                best = c;
            }
        }
        best
    }

    /// The current value (see [`current_claim`](Self::current_claim)).
    pub fn current(&self) -> &Value {
        &self.current_claim().value
    }

    /// True when two sources claim different values (by [`same_value`]).
    pub fn is_contested(&self) -> bool {
        let first = &self.claims[0].value;
        self.claims[1..].iter().any(|c| !same_value(&c.value, first))
    }

    /// The claims ranked for display: the current one first, then by trust and time descending.
    pub fn ranked_claims(&self) -> Vec<Claim> {
        let mut ranked: Vec<(usize, &Claim)> = self.claims.iter().enumerate().collect();
        ranked.sort_by(|(i, a), (j, b)| {
            b.trust.get().total_cmp(&a.trust.get()).then(b.at.cmp(&a.at)).then(j.cmp(i))
        });
        ranked.into_iter().map(|(_, c)| c.clone()).collect()
    }
}

/// What a [`Properties::set`] did to the claims of the property.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyChange {
    /// The property had no claim; this is its first.
    Added,
    /// The source restated the value it already claimed (its trust and time were refreshed).
    Confirmed,
    /// Another source already claimed this value; this source's claim was added beside it.
    Corroborated,
    /// The source changed its own claim; its older value is returned.
    Superseded {
        /// The value the source claimed before.
        previous: Value,
    },
    /// The source's claim was added beside claims of other values.
    Disputed,
}

/// The result of [`Properties::set`].
#[derive(Debug, Clone, PartialEq)]
pub struct SetOutcome {
    /// What happened to the claims.
    pub change: PropertyChange,
    /// True when, after the write, sources disagree about the property.
    pub contested: bool,
}

/// An open disagreement between sources about one property of one concept.
#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction {
    /// The concept.
    pub concept: RecordId,
    /// The property key.
    pub key: String,
    /// Every claim, the current one first, then by trust and time descending.
    pub claims: Vec<Claim>,
}

impl Contradiction {
    /// The contradiction over `property` of `concept` (whether or not it is contested).
    pub fn of(concept: RecordId, property: &Property) -> Self {
        Self { concept, key: property.key.clone(), claims: property.ranked_claims() }
    }

    /// The claim whose value is current.
    pub fn current(&self) -> &Claim {
        &self.claims[0]
    }

    /// The distinct values claimed (by [`same_value`]), the current one first.
    pub fn values(&self) -> Vec<&Value> {
        let mut out: Vec<&Value> = Vec::with_capacity(self.claims.len());
        for c in &self.claims {
            if !out.iter().any(|v| same_value(v, &c.value)) {
                out.push(&c.value);
            }
        }
        out
    }
}

/// The properties of a concept: for each key, the claims made about it.
///
/// Keys are kept as given (trimmed) and compared exactly; they are short and few, so they live
/// in a small vector in the order first set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Properties(Vec<Property>);

impl Properties {
    /// No property (allocates nothing).
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is no property.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every property, in the order first set.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Property> {
        self.0.iter()
    }

    /// The keys, in the order first set.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.iter().map(|p| p.key.as_str())
    }

    /// The property `key`.
    pub fn get(&self, key: &str) -> Option<&Property> {
        self.0.iter().find(|p| p.key == key.trim())
    }

    /// The current value of `key` (see [`Property::current`]).
    pub fn current(&self, key: &str) -> Option<&Value> {
        self.get(key).map(Property::current)
    }

    /// True when some property is contested.
    pub fn is_contested(&self) -> bool {
        self.0.iter().any(Property::is_contested)
    }

    /// The contested properties.
    pub fn contested(&self) -> impl Iterator<Item = &Property> {
        self.0.iter().filter(|p| p.is_contested())
    }

    /// Records `source`'s claim that `key` is `value` (see the [module docs](self)).
    ///
    /// Errors (nothing changes): a key without a letter or digit ([`Error::EmptyName`]); a value
    /// holding a NaN or an infinity, or nested deeper than [`MAX_DEPTH`] (see [`check_value`]).
    pub fn set(
        &mut self,
        key: &str,
        value: Value,
        source: Source,
        trust: Trust,
        at: Timestamp,
    ) -> Result<SetOutcome> {
        let key = check_key(key)?;
        check_value(&value)?;
        Ok(self.set_checked(key, value, source, trust, at))
    }

    /// [`set`](Self::set) of a key and a value already checked (`key` trimmed).
    pub(crate) fn set_checked(
        &mut self,
        key: &str,
        value: Value,
        source: Source,
        trust: Trust,
        at: Timestamp,
    ) -> SetOutcome {
        let claim = Claim { value, source, trust, at };
        let Some(prop) = self.0.iter_mut().find(|p| p.key == key) else {
            self.0.push(Property { key: key.to_owned(), claims: vec![claim] });
            return SetOutcome { change: PropertyChange::Added, contested: false };
        };
        let change = if let Some(own) = prop.claims.iter_mut().find(|c| c.source == claim.source) {
            if same_value(&own.value, &claim.value) {
                *own = claim;
                PropertyChange::Confirmed
            } else {
                let previous = std::mem::replace(own, claim).value;
                PropertyChange::Superseded { previous }
            }
        } else {
            let agrees = prop.claims.iter().any(|c| same_value(&c.value, &claim.value));
            prop.claims.push(claim);
            if agrees { PropertyChange::Corroborated } else { PropertyChange::Disputed }
        };
        SetOutcome { change, contested: prop.is_contested() }
    }

    /// Removes `source`'s claim on `key`; returns it. The property goes when its last claim does.
    pub fn retract(&mut self, key: &str, source: &Source) -> Option<Claim> {
        let pos = self.0.iter().position(|p| p.key == key.trim())?;
        let prop = &mut self.0[pos];
        let at = prop.claims.iter().position(|c| c.source == *source)?;
        let claim = prop.claims.remove(at);
        if prop.claims.is_empty() {
            self.0.remove(pos);
        }
        Some(claim)
    }

    /// Keeps only the claims on `key` whose value is `value` (by [`same_value`]); returns the
    /// claims dropped. `None` when no claim on `key` has that value (then nothing changes).
    pub fn accept(&mut self, key: &str, value: &Value) -> Option<Vec<Claim>> {
        let prop = self.0.iter_mut().find(|p| p.key == key.trim())?;
        if !prop.claims.iter().any(|c| same_value(&c.value, value)) {
            return None;
        }
        let (kept, dropped): (Vec<Claim>, Vec<Claim>) =
            std::mem::take(&mut prop.claims).into_iter().partition(|c| same_value(&c.value, value));
        prop.claims = kept;
        Some(dropped)
    }

    /// Removes the property `key` with all its claims; returns it.
    pub fn remove(&mut self, key: &str) -> Option<Property> {
        let pos = self.0.iter().position(|p| p.key == key.trim())?;
        Some(self.0.remove(pos))
    }

    /// Removes every claim made by `source`; returns the keys it had claimed.
    pub fn retract_source(&mut self, source: &Source) -> Vec<String> {
        let mut keys = Vec::new();
        self.0.retain_mut(|p| {
            let before = p.claims.len();
            p.claims.retain(|c| c.source != *source);
            if p.claims.len() != before {
                keys.push(p.key.clone());
            }
            !p.claims.is_empty()
        });
        keys
    }

    /// True when `source` claims something here.
    pub fn has_claim_from(&self, source: &Source) -> bool {
        self.0.iter().any(|p| p.claims.iter().any(|c| c.source == *source))
    }

    /// Checks what deserialisation cannot: keys non-empty and distinct, every property with at
    /// least one claim and at most one claim per source, every value finite.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        for (i, p) in self.0.iter().enumerate() {
            if check_key(&p.key).map_or(true, |k| k != p.key) {
                return Err(format!("property key {:?} is empty or untrimmed", p.key));
            }
            if self.0[..i].iter().any(|q| q.key == p.key) {
                return Err(format!("property key {:?} appears twice", p.key));
            }
            if p.claims.is_empty() {
                return Err(format!("property {:?} has no claim", p.key));
            }
            for (j, c) in p.claims.iter().enumerate() {
                if p.claims[..j].iter().any(|d| d.source == c.source) {
                    return Err(format!("property {:?} has two claims from {}", p.key, c.source));
                }
                if let Err(err) = check_value(&c.value) {
                    return Err(format!("property {:?}: {err}", p.key));
                }
            }
        }
        Ok(())
    }
}

/// Whether `a` and `b` are the same property value: equal, except that numbers compare by
/// value (`Int(1)` and `Float(1.0)` are the same, `Int(2^53 + 1)` and `Float(2^53)` are not),
/// in lists element by element and in maps entry by entry (same keys in the same order).
///
/// ```
/// use atl::properties::same_value;
/// use maxim_core::value::Value;
/// assert!(same_value(&Value::Int(1), &Value::Float(1.0)));
/// assert!(same_value(&Value::List(vec![Value::Float(2.0)]), &Value::List(vec![Value::Int(2)])));
/// assert!(!same_value(&Value::Int(1), &Value::Float(1.5)));
/// assert!(!same_value(&Value::Int(1), &Value::from("1")));
/// ```
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(i), Value::Float(x)) | (Value::Float(x), Value::Int(i)) => int_equals_float(*i, *x),
        (Value::List(xs), Value::List(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_value(x, y))
        }
        (Value::Map(xs), Value::Map(ys)) => {
            xs.len() == ys.len()
                && xs.iter().zip(ys.iter()).all(|((kx, x), (ky, y))| kx == ky && same_value(x, y))
        }
        _ => a == b,
    }
}

/// Whether the float `x` is exactly the integer `i`.
fn int_equals_float(i: i64, x: f64) -> bool {
    // -2^63 <= x < 2^63 and integral: the conversion is exact.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    x.fract() == 0.0 && (-TWO_63..TWO_63).contains(&x) && x as i64 == i
}

/// Checks that a property value holds no NaN or infinity (at any depth) and nests lists and
/// maps at most [`MAX_DEPTH`] levels deep, as the snapshot codec reads them back.
///
/// Errors: [`maxim_core::Error::OutOfRange`] for a number that is not finite,
/// [`maxim_core::Error::InvalidArgument`] for a value nested too deeply (both inside
/// [`Error::Core`]).
///
/// ```
/// use atl::properties::check_value;
/// use maxim_core::value::Value;
/// assert!(check_value(&Value::List(vec![Value::Float(0.5), Value::Int(3)])).is_ok());
/// assert!(check_value(&Value::List(vec![Value::Float(f64::NAN)])).is_err());
/// ```
pub fn check_value(value: &Value) -> Result<()> {
    let mut stack: Vec<(&Value, u32)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Float(x) if !x.is_finite() => {
                return Err(Error::out_of_range("property value", *x, "a finite number"));
            }
            Value::List(items) => {
                nested(depth)?;
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Map(map) => {
                nested(depth)?;
                stack.extend(map.values().map(|item| (item, depth + 1)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Refuses a list or map at `depth` levels of nesting already when one more exceeds
/// [`MAX_DEPTH`].
fn nested(depth: u32) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(Error::Core(maxim_core::Error::invalid(
            "property value",
            format!("lists and maps nested more than {MAX_DEPTH} levels deep"),
        )));
    }
    Ok(())
}

/// The trimmed key, or an error when it has no letter or digit.
pub(crate) fn check_key(key: &str) -> Result<&str> {
    let key = key.trim();
    if key.chars().any(char::is_alphanumeric) {
        Ok(key)
    } else {
        Err(Error::EmptyName { field: "property key", value: key.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_secs(s)
    }

    fn trust(x: f64) -> Trust {
        Trust::new(x).unwrap()
    }

    #[test]
    fn same_source_supersedes_its_own_claim() {
        let mut p = Properties::new();
        p.set("room", Value::from("kitchen"), Source::ToolResult, trust(0.8), t(1)).unwrap();
        let out = p.set("room", Value::from("hall"), Source::ToolResult, trust(0.8), t(2)).unwrap();
        assert_eq!(out.change, PropertyChange::Superseded { previous: Value::from("kitchen") });
        assert!(!out.contested);
        assert_eq!(p.get("room").unwrap().claims().len(), 1);
        assert_eq!(p.current("room"), Some(&Value::from("hall")));
    }

    #[test]
    fn confirmation_and_corroboration_do_not_contest() {
        let mut p = Properties::new();
        p.set("k", Value::Int(1), Source::ToolResult, trust(0.8), t(1)).unwrap();
        let again = p.set("k", Value::Int(1), Source::ToolResult, trust(0.9), t(2)).unwrap();
        assert_eq!(again.change, PropertyChange::Confirmed);
        assert_eq!(p.get("k").unwrap().claims()[0].trust.get(), 0.9);
        let other = p.set("k", Value::Int(1), Source::UserStated, trust(1.0), t(3)).unwrap();
        assert_eq!(other.change, PropertyChange::Corroborated);
        assert!(!other.contested && !p.is_contested());
    }

    #[test]
    fn current_value_is_highest_trust_then_newest() {
        let mut p = Properties::new();
        p.set("c", Value::from("a"), Source::Other("s1".into()), trust(0.5), t(5)).unwrap();
        let out = p.set("c", Value::from("b"), Source::Other("s2".into()), trust(0.5), t(9)).unwrap();
        assert_eq!(out.change, PropertyChange::Disputed);
        assert!(out.contested);
        assert_eq!(p.current("c"), Some(&Value::from("b")), "same trust: the newer claim");
        p.set("c", Value::from("z"), Source::Other("s3".into()), trust(0.9), t(1)).unwrap();
        assert_eq!(p.current("c"), Some(&Value::from("z")), "higher trust beats newer");
        let contradiction = Contradiction::of(RecordId::from_u128(1), p.get("c").unwrap());
        assert_eq!(contradiction.current().value, Value::from("z"));
        let values: Vec<_> = contradiction.values().into_iter().cloned().collect();
        assert_eq!(values, [Value::from("z"), Value::from("b"), Value::from("a")]);
    }

    #[test]
    fn equal_rank_goes_to_the_last_claim() {
        let mut p = Properties::new();
        p.set("c", Value::from("a"), Source::Other("s1".into()), trust(0.5), t(5)).unwrap();
        p.set("c", Value::from("b"), Source::Other("s2".into()), trust(0.5), t(5)).unwrap();
        assert_eq!(p.current("c"), Some(&Value::from("b")));
        assert_eq!(p.get("c").unwrap().ranked_claims()[0].value, Value::from("b"));
    }

    #[test]
    fn accept_and_retract_resolve() {
        let mut p = Properties::new();
        p.set("c", Value::from("a"), Source::UserStated, trust(1.0), t(1)).unwrap();
        p.set("c", Value::from("b"), Source::ToolResult, trust(0.8), t(2)).unwrap();
        p.set("c", Value::from("b"), Source::Episodic, trust(0.6), t(3)).unwrap();
        assert!(p.accept("c", &Value::from("nope")).is_none());
        assert!(p.is_contested());
        let dropped = p.accept("c", &Value::from("b")).unwrap();
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].source, Source::UserStated);
        assert!(!p.is_contested());
        assert_eq!(p.current("c"), Some(&Value::from("b")));
        assert!(p.retract("c", &Source::UserStated).is_none());
        assert!(p.retract("c", &Source::ToolResult).is_some());
        assert!(p.retract("c", &Source::Episodic).is_some());
        assert!(p.is_empty(), "the last retraction removes the property");
    }

    #[test]
    fn retract_source_everywhere() {
        let mut p = Properties::new();
        let web = Source::Web("x.org".into());
        p.set("a", Value::Int(1), web.clone(), trust(0.3), t(1)).unwrap();
        p.set("b", Value::Int(2), web.clone(), trust(0.3), t(1)).unwrap();
        p.set("b", Value::Int(3), Source::UserStated, trust(1.0), t(1)).unwrap();
        assert!(p.has_claim_from(&web));
        assert_eq!(p.retract_source(&web), ["a", "b"]);
        assert_eq!(p.keys().collect::<Vec<_>>(), ["b"]);
        assert!(!p.has_claim_from(&web));
    }

    #[test]
    fn bad_keys_change_nothing() {
        let mut p = Properties::new();
        for bad in ["", "   ", "?!"] {
            assert!(matches!(
                p.set(bad, Value::Null, Source::UserStated, trust(1.0), t(1)),
                Err(Error::EmptyName { .. })
            ));
        }
        assert!(p.is_empty());
        p.set("  color ", Value::Null, Source::UserStated, trust(1.0), t(1)).unwrap();
        assert_eq!(p.keys().collect::<Vec<_>>(), ["color"]);
        assert!(p.get("color").is_some() && p.validate().is_ok());
    }
}
