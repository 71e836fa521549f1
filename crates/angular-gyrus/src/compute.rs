//! Exact compute and `analyze` (§6.3).
//!
//! - [`compute`]: add, subtract (the first minus the rest), multiply, divide (the first by
//!   the rest), power and modulo (Python's sign rule: the result takes the divisor's sign) on
//!   finite operands, returning an [`ExactResult`] with its code and verbal forms. Where the
//!   original returned NaN (a division by zero, too few operands), this returns a typed error.
//! - [`analyze`] with an [`AnalysisMethod`]: [`descriptive`] (the mean and the sample
//!   variance are the exact values rounded once, as Python's `statistics` module gives them;
//!   the median averages the two middle values of an even count; the mode is the first most
//!   frequent value in data order), [`linear`] (least squares against the index, `R² =
//!   Sxy²/(Sxx·Syy)`), [`quadratic`] (normal equations by Cramer's rule, falling back to the
//!   line when `|det| < 1e-15`), and [`percentiles`] (p25, p50, p75, p90, p99 by linear
//!   interpolation).
//!
//! ```
//! use angular_gyrus::compute::{self, AnalysisMethod, Analysis, Operation};
//! let r = compute::compute(Operation::Subtract, &[10.0, 3.0, 2.0])?;
//! assert_eq!((r.value, r.code.as_str()), (5.0, "10 - 3 - 2"));
//! assert!(compute::compute(Operation::Divide, &[1.0, 0.0]).is_err());
//! let Analysis::Descriptive(d) = compute::analyze(&[1.0, 2.0, 2.0, 5.0], AnalysisMethod::Descriptive)? else { unreachable!() };
//! assert_eq!((d.mean, d.median, d.mode, d.variance), (2.5, 2.0, 2.0, 3.0));
//! # Ok::<(), angular_gyrus::Error>(())
//! ```

use std::fmt::Write as _;
use std::str::FromStr;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, check_all_finite};
use crate::exact;

/// An exact arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operation {
    /// The sum of the operands (0 for none).
    Add,
    /// The first operand minus the others.
    Subtract,
    /// The product of the operands (1 for none).
    Multiply,
    /// The first operand divided by the others.
    Divide,
    /// The first operand to the power of the second.
    Power,
    /// The first operand modulo the second, with the divisor's sign (Python's `%`).
    Modulo,
}

impl Operation {
    /// Every operation.
    pub const ALL: [Self; 6] =
        [Self::Add, Self::Subtract, Self::Multiply, Self::Divide, Self::Power, Self::Modulo];

    /// The lower-case name (`add`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Subtract => "subtract",
            Self::Multiply => "multiply",
            Self::Divide => "divide",
            Self::Power => "power",
            Self::Modulo => "modulo",
        }
    }

    const fn symbol(self) -> &'static str {
        match self {
            Self::Add => " + ",
            Self::Subtract => " - ",
            Self::Multiply => " * ",
            Self::Divide => " / ",
            Self::Power => " ** ",
            Self::Modulo => " % ",
        }
    }
}

impl FromStr for Operation {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        Self::ALL
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(t))
            .ok_or_else(|| Error::Unknown { kind: "operation", name: s.to_owned() })
    }
}

/// The result of [`compute`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactResult {
    /// The value (always finite).
    pub value: f64,
    /// The operation.
    pub operation: Operation,
    /// `"<code> = <value>"`.
    pub verbal: String,
    /// The expression (`"3 + 4"`).
    pub code: String,
}

/// Applies `op` to `operands` (see the [module docs](self)). Errors: a NaN or infinite
/// operand, too few operands (subtract 1, divide 2, power 2, modulo 2), a division or modulo
/// by zero or any other non-finite result ([`Error::Undefined`]).
pub fn compute(op: Operation, operands: &[f64]) -> Result<ExactResult> {
    check_all_finite(op.as_str(), operands)?;
    let needed = match op {
        Operation::Add | Operation::Multiply => 0,
        Operation::Subtract => 1,
        Operation::Divide | Operation::Power | Operation::Modulo => 2,
    };
    if operands.len() < needed || (matches!(op, Operation::Power | Operation::Modulo) && operands.len() > 2) {
        return Err(Error::TooShort { what: op.as_str(), needed, got: operands.len() });
    }
    let value = match op {
        Operation::Add => operands.iter().sum(),
        Operation::Multiply => operands.iter().product(),
        Operation::Subtract => operands[1..].iter().fold(operands[0], |a, b| a - b),
        Operation::Divide => {
            if operands[1..].contains(&0.0) {
                return Err(Error::Undefined { operation: "divide" });
            }
            operands[1..].iter().fold(operands[0], |a, b| a / b)
        }
        Operation::Power => operands[0].powf(operands[1]),
        Operation::Modulo => {
            let (a, b) = (operands[0], operands[1]);
            if b == 0.0 {
                return Err(Error::Undefined { operation: "modulo" });
            }
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) { r + b } else { r }
        }
    };
    if !value.is_finite() {
        return Err(Error::Undefined { operation: op.as_str() });
    }
    let mut code = String::new();
    for (i, x) in operands.iter().enumerate() {
        if i > 0 {
            code.push_str(op.symbol());
        }
        let _ = write!(code, "{x}");
    }
    let verbal = format!("{code} = {value}");
    Ok(ExactResult { value, operation: op, verbal, code })
}

/// What [`analyze`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AnalysisMethod {
    /// Count, mean, median, mode, variance, standard deviation, min, max, range.
    Descriptive,
    /// A least-squares line against the index.
    Linear,
    /// A least-squares parabola against the index.
    Quadratic,
    /// p25, p50, p75, p90, p99.
    Percentiles,
}

impl FromStr for AnalysisMethod {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "descriptive" => Ok(Self::Descriptive),
            "linear" => Ok(Self::Linear),
            "quadratic" => Ok(Self::Quadratic),
            "percentiles" => Ok(Self::Percentiles),
            _ => Err(Error::Unknown { kind: "method", name: s.to_owned() }),
        }
    }
}

/// Descriptive statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Descriptive {
    /// Number of values.
    pub count: usize,
    /// The mean, exactly rounded.
    pub mean: f64,
    /// The median.
    pub median: f64,
    /// The first most frequent value in data order.
    pub mode: f64,
    /// The sample variance, exactly rounded (0 for one value).
    pub variance: f64,
    /// The square root of the exact variance, rounded once (Python 3.11's `stdev`).
    pub std_dev: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// `max - min`.
    pub range: f64,
    /// `min(1, n / 30)`.
    pub confidence: f64,
}

/// A least-squares line `y = slope * x + intercept` with `x = 0, 1, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// Slope per step.
    pub slope: f64,
    /// Value at `x = 0`.
    pub intercept: f64,
    /// `Sxy² / (Sxx · Syy)`, 0 for constant values.
    pub r_squared: f64,
    /// Equal to `r_squared`.
    pub confidence: f64,
}

impl LinearFit {
    /// "strong" (R² ≥ 0.8), "moderate" (≥ 0.5) or "weak".
    pub fn strength(&self) -> &'static str {
        if self.r_squared >= 0.8 {
            "strong"
        } else if self.r_squared >= 0.5 {
            "moderate"
        } else {
            "weak"
        }
    }
}

/// A least-squares parabola `y = a x² + b x + c` with `x = 0, 1, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuadraticFit {
    /// The `x²` coefficient (0 when the fit fell back to a line).
    pub a: f64,
    /// The `x` coefficient.
    pub b: f64,
    /// The constant.
    pub c: f64,
    /// `1 - SSE / SST`, 0 for constant values.
    pub r_squared: f64,
    /// True when the normal equations were singular and the line was fitted instead.
    pub fell_back_to_linear: bool,
    /// Equal to `r_squared`.
    pub confidence: f64,
}

/// Percentiles by linear interpolation between the order statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// 25th.
    pub p25: f64,
    /// 50th.
    pub p50: f64,
    /// 75th.
    pub p75: f64,
    /// 90th.
    pub p90: f64,
    /// 99th.
    pub p99: f64,
    /// `min(1, n / 30)`.
    pub confidence: f64,
}

/// What [`analyze`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Analysis {
    /// [`AnalysisMethod::Descriptive`].
    Descriptive(Descriptive),
    /// [`AnalysisMethod::Linear`].
    Linear(LinearFit),
    /// [`AnalysisMethod::Quadratic`].
    Quadratic(QuadraticFit),
    /// [`AnalysisMethod::Percentiles`].
    Percentiles(Percentiles),
}

impl Analysis {
    /// The analysis's confidence in `[0, 1]`.
    pub fn confidence(&self) -> f64 {
        match self {
            Self::Descriptive(d) => d.confidence,
            Self::Linear(l) => l.confidence,
            Self::Quadratic(q) => q.confidence,
            Self::Percentiles(p) => p.confidence,
        }
    }
}

/// Runs `method` on `data`. Errors: no data, a NaN or infinity, fewer than two values for a
/// fit, a variance too large for a double.
pub fn analyze(data: &[f64], method: AnalysisMethod) -> Result<Analysis> {
    Ok(match method {
        AnalysisMethod::Descriptive => Analysis::Descriptive(descriptive(data)?),
        AnalysisMethod::Linear => Analysis::Linear(linear(data)?),
        AnalysisMethod::Quadratic => Analysis::Quadratic(quadratic(data)?),
        AnalysisMethod::Percentiles => Analysis::Percentiles(percentiles(data)?),
    })
}

fn check(what: &'static str, data: &[f64], needed: usize) -> Result<()> {
    if data.len() < needed {
        return Err(Error::TooShort { what, needed, got: data.len() });
    }
    check_all_finite(what, data)
}

fn sorted(data: &[f64]) -> Vec<f64> {
    let mut s = data.to_vec();
    s.sort_unstable_by(f64::total_cmp);
    s
}

/// Descriptive statistics of `data` (see the [module docs](self)).
pub fn descriptive(data: &[f64]) -> Result<Descriptive> {
    check("descriptive", data, 1)?;
    let n = data.len();
    let s = sorted(data);
    let median = if n % 2 == 1 { s[n / 2] } else { f64::midpoint(s[n / 2 - 1], s[n / 2]) };
    let (variance, std_dev) = if n == 1 {
        (0.0, 0.0)
    } else {
        let undefined = || Error::Undefined { operation: "variance" };
        (exact::exact_variance(data).ok_or_else(undefined)?, exact::exact_std(data).ok_or_else(undefined)?)
    };
    let (min, max) = (s[0], s[n - 1]);
    Ok(Descriptive {
        count: n,
        mean: exact::exact_mean(data),
        median,
        mode: mode(data),
        variance,
        std_dev,
        min,
        max,
        range: max - min,
        confidence: (n as f64 / 30.0).min(1.0),
    })
}

/// The first most frequent value of `data` in data order (`0.0` and `-0.0` count as one).
fn mode(data: &[f64]) -> f64 {
    let key = |x: f64| if x == 0.0 { 0u64 } else { x.to_bits() };
    let mut counts: FxHashMap<u64, u32> = FxHashMap::default();
    for &x in data {
        *counts.entry(key(x)).or_insert(0) += 1;
    }
    let top = counts.values().copied().max().unwrap_or(0);
    data.iter().copied().find(|&x| counts[&key(x)] == top).unwrap_or(data[0])
}

/// The least-squares line through `data` against `0, 1, ...`. Errors: fewer than two values
/// (the original reported confidence 0), a NaN or infinity.
pub fn linear(data: &[f64]) -> Result<LinearFit> {
    check("linear", data, 2)?;
    let n = data.len() as f64;
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = data.iter().sum::<f64>() / n;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (i, &y) in data.iter().enumerate() {
        let dx = i as f64 - x_mean;
        let dy = y - y_mean;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    let slope = sxy / sxx;
    let intercept = y_mean - slope * x_mean;
    let r_squared = if syy == 0.0 { 0.0 } else { (sxy * sxy / (sxx * syy)).clamp(0.0, 1.0) };
    if !(slope.is_finite() && intercept.is_finite() && r_squared.is_finite()) {
        return Err(Error::Undefined { operation: "linear" });
    }
    Ok(LinearFit { slope, intercept, r_squared, confidence: r_squared })
}

/// The least-squares parabola through `data` against `0, 1, ...` (see the
/// [module docs](self)). Errors as [`linear`].
pub fn quadratic(data: &[f64]) -> Result<QuadraticFit> {
    check("quadratic", data, 2)?;
    let mut s = [0.0f64; 5]; // sums of x^0 .. x^4
    let (mut sy, mut sxy, mut sx2y) = (0.0, 0.0, 0.0);
    for (i, &y) in data.iter().enumerate() {
        let x = i as f64;
        let mut p = 1.0;
        for sk in &mut s {
            *sk += p;
            p *= x;
        }
        sy += y;
        sxy += x * y;
        sx2y += x * x * y;
    }
    // | s4 s3 s2 | |a|   |sx2y|
    // | s3 s2 s1 | |b| = |sxy |
    // | s2 s1 s0 | |c|   |sy  |
    let det3 = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let m = [[s[4], s[3], s[2]], [s[3], s[2], s[1]], [s[2], s[1], s[0]]];
    let rhs = [sx2y, sxy, sy];
    let det = det3(m);
    let (a, b, c, fell_back) = if det.abs() < 1e-15 {
        let l = linear(data)?;
        (0.0, l.slope, l.intercept, true)
    } else {
        let solve = |col: usize| {
            let mut mm = m;
            for (row, r) in mm.iter_mut().enumerate() {
                r[col] = rhs[row];
            }
            det3(mm) / det
        };
        (solve(0), solve(1), solve(2), false)
    };
    let y_mean = sy / data.len() as f64;
    let (mut sse, mut sst) = (0.0, 0.0);
    for (i, &y) in data.iter().enumerate() {
        let x = i as f64;
        let e = y - (a * x * x + b * x + c);
        sse += e * e;
        sst += (y - y_mean) * (y - y_mean);
    }
    let r_squared = if sst == 0.0 { 0.0 } else { (1.0 - sse / sst).clamp(0.0, 1.0) };
    if !(a.is_finite() && b.is_finite() && c.is_finite() && r_squared.is_finite()) {
        return Err(Error::Undefined { operation: "quadratic" });
    }
    Ok(QuadraticFit { a, b, c, r_squared, fell_back_to_linear: fell_back, confidence: r_squared })
}

/// The `p`-th percentile (`p` in `[0, 100]`) of sorted `s` by linear interpolation.
fn percentile(s: &[f64], p: f64) -> f64 {
    let k = (s.len() - 1) as f64 * p / 100.0;
    let (f, c) = (k.floor(), k.ceil());
    if f == c {
        return s[k as usize];
    }
    s[f as usize] * (c - k) + s[c as usize] * (k - f)
}

/// p25, p50, p75, p90 and p99 of `data`.
pub fn percentiles(data: &[f64]) -> Result<Percentiles> {
    check("percentiles", data, 1)?;
    let s = sorted(data);
    let p = Percentiles {
        p25: percentile(&s, 25.0),
        p50: percentile(&s, 50.0),
        p75: percentile(&s, 75.0),
        p90: percentile(&s, 90.0),
        p99: percentile(&s, 99.0),
        confidence: (data.len() as f64 / 30.0).min(1.0),
    };
    if [p.p25, p.p50, p.p75, p.p90, p.p99].iter().any(|v| !v.is_finite()) {
        return Err(Error::Undefined { operation: "percentiles" });
    }
    Ok(p)
}

impl crate::store::AngularGyrus {
    /// The METHOD record best matching `description` (§6.3 `recall_method`): the one whose
    /// name words (underscores read as spaces) and verbal words share the most words with the
    /// description, ignoring case; ties go to the oldest id. `None` when no method shares a
    /// word. No access is recorded.
    pub fn recall_method(&self, description: &str) -> Option<&crate::MathRecord> {
        let words = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect()
        };
        let wanted = words(description);
        let filter = crate::MathFilter::new().category(crate::MathCategory::Method).include_compressed(false);
        let mut best: Option<(usize, &crate::MathRecord)> = None;
        for r in self.recall_records(&filter, usize::MAX).into_iter().filter_map(crate::MathEntry::as_full) {
            let mut own = words(&r.name.replace('_', " "));
            own.extend(words(&r.verbal));
            own.sort_unstable();
            own.dedup();
            let overlap = wanted.iter().filter(|w| own.binary_search(w).is_ok()).count();
            let better =
                best.is_none_or(|(b, held)| overlap > b || (overlap == b && r.meta.id < held.meta.id));
            if overlap > 0 && better {
                best = Some((overlap, r));
            }
        }
        best.map(|(_, r)| r)
    }

    /// The code form of the METHOD named `name` (§6.3 `codify`).
    pub fn codify(&self, name: &str) -> Option<&str> {
        let filter = crate::MathFilter::new().name(name).category(crate::MathCategory::Method);
        self.recall_records(&filter, 1)
            .into_iter()
            .find_map(crate::MathEntry::as_full)
            .map(|r| r.code.as_str())
    }
}
