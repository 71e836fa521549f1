//! Exact rational arithmetic on finite `f64`s, for the mean and variance that the reference's
//! `statistics` module rounds exactly: the result is the exact rational value rounded once,
//! to nearest with ties to even.
//!
//! Every finite double is `m * 2^e` with an integer `m`; scaled to the smallest exponent of
//! the data, the values become integers, and sums, products and one final division are done
//! on unsigned big integers (little-endian `u64` limbs). Typical data share exponents, so the
//! integers stay a limb or two wide.

use std::cmp::Ordering;

/// An unsigned big integer, little-endian limbs, no trailing zero limb.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Big(Vec<u64>);

impl Big {
    pub(crate) fn from_u128(v: u128) -> Self {
        let mut b = Self(vec![v as u64, (v >> 64) as u64]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bit_len(&self) -> u64 {
        self.0.last().map_or(0, |&top| (self.0.len() as u64 - 1) * 64 + u64::from(64 - top.leading_zeros()))
    }

    /// `m << shift`.
    fn shifted(m: u64, shift: u32) -> Self {
        let mut b = Self::from_u128(u128::from(m));
        b.shl(u64::from(shift));
        b
    }

    fn shl(&mut self, k: u64) {
        if self.is_zero() || k == 0 {
            return;
        }
        let (limbs, bits) = ((k / 64) as usize, (k % 64) as u32);
        let mut out = vec![0u64; limbs];
        if bits == 0 {
            out.extend_from_slice(&self.0);
        } else {
            let mut carry = 0u64;
            for &l in &self.0 {
                out.push((l << bits) | carry);
                carry = l >> (64 - bits);
            }
            out.push(carry);
        }
        self.0 = out;
        self.trim();
    }

    fn shr1(&mut self) {
        let mut carry = 0u64;
        for l in self.0.iter_mut().rev() {
            let next = *l & 1;
            *l = (*l >> 1) | (carry << 63);
            carry = next;
        }
        self.trim();
    }

    fn cmp_mag(&self, other: &Self) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    pub(crate) fn add(&mut self, other: &Self) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut carry = false;
        for (i, l) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            if o == 0 && !carry && i >= other.0.len() {
                break;
            }
            let (s1, c1) = l.overflowing_add(o);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *l = s2;
            carry = c1 || c2;
        }
        if carry {
            self.0.push(1);
        }
    }

    /// `self - other`, which must not be negative.
    pub(crate) fn sub(&mut self, other: &Self) {
        debug_assert!(self.cmp_mag(other) != Ordering::Less);
        let mut borrow = false;
        for (i, l) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            if o == 0 && !borrow && i >= other.0.len() {
                break;
            }
            let (d1, b1) = l.overflowing_sub(o);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *l = d2;
            borrow = b1 || b2;
        }
        self.trim();
    }

    pub(crate) fn mul(&self, other: &Self) -> Self {
        if self.is_zero() || other.is_zero() {
            return Self::default();
        }
        let mut out = vec![0u64; self.0.len() + other.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in other.0.iter().enumerate() {
                let t = u128::from(a) * u128::from(b) + u128::from(out[i + j]) + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            out[i + other.0.len()] = carry as u64;
        }
        let mut b = Self(out);
        b.trim();
        b
    }
}

/// A signed big integer.
#[derive(Debug, Clone, Default)]
pub(crate) struct SignedBig {
    pub(crate) neg: bool,
    pub(crate) mag: Big,
}

impl SignedBig {
    fn add_signed(&mut self, neg: bool, mag: &Big) {
        if self.neg == neg || self.mag.is_zero() {
            if self.mag.is_zero() {
                self.neg = neg;
            }
            self.mag.add(mag);
        } else if self.mag.cmp_mag(mag) != Ordering::Less {
            self.mag.sub(mag);
        } else {
            let mut m = mag.clone();
            m.sub(&self.mag);
            self.mag = m;
            self.neg = neg;
        }
        if self.mag.is_zero() {
            self.neg = false;
        }
    }
}

/// `x = (-1)^neg * m * 2^e` with `m` odd (or zero).
fn decompose(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | (1u64 << 52), exp - 1075) };
    if m == 0 {
        return (false, 0, 0);
    }
    let tz = m.trailing_zeros();
    (neg, m >> tz, e + tz as i32)
}

/// The exact sum and sum of squares of `data` (finite values), scaled: `sum = S * 2^scale`,
/// `sum_sq = Q * 2^(2 scale)`.
pub(crate) struct ExactSums {
    pub(crate) sum: SignedBig,
    pub(crate) sum_sq: Big,
    pub(crate) scale: i32,
}

pub(crate) fn exact_sums(data: &[f64]) -> ExactSums {
    let parts: Vec<(bool, u64, i32)> = data.iter().map(|&x| decompose(x)).collect();
    let scale = parts.iter().filter(|p| p.1 != 0).map(|p| p.2).min().unwrap_or(0);
    let mut sum = SignedBig::default();
    let mut sum_sq = Big::default();
    for &(neg, m, e) in &parts {
        if m == 0 {
            continue;
        }
        let x = Big::shifted(m, (e - scale) as u32);
        sum.add_signed(neg, &x);
        sum_sq.add(&x.mul(&x));
    }
    ExactSums { sum, sum_sq, scale }
}

/// `(-1)^neg * num / den * 2^scale`, rounded once to nearest, ties to even; `None` when it
/// overflows. `den` must not be zero.
pub(crate) fn ratio_to_f64(neg: bool, num: &Big, den: &Big, scale: i64) -> Option<f64> {
    if num.is_zero() {
        return Some(0.0);
    }
    let (la, lb) = (num.bit_len() as i64, den.bit_len() as i64);
    // Scale so that the quotient has 55 or 56 bits.
    let k = 55 - (la - lb);
    let mut a = num.clone();
    let mut b = den.clone();
    if k >= 0 {
        a.shl(k as u64);
    } else {
        b.shl((-k) as u64);
    }
    let mut q: u64 = 0;
    b.shl(56);
    for i in (0..=56).rev() {
        if a.cmp_mag(&b) != Ordering::Less {
            a.sub(&b);
            q |= 1u64 << i;
        }
        b.shr1();
    }
    let sticky = !a.is_zero();
    let nb = i64::from(64 - q.leading_zeros());
    let exp = scale - k; // value = q * 2^exp
    let top = nb - 1 + exp; // the leading bit's weight
    if top > 1023 {
        return None;
    }
    let p = if top >= -1022 { 53 } else { 53 - (-1022 - top) };
    if p < 0 {
        return Some(if neg { -0.0 } else { 0.0 });
    }
    let drop = nb - p; // >= 2: q has at least 55 bits
    let mut mant = if drop >= 64 { 0 } else { q >> drop };
    let rem = q & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    if rem > half || (rem == half && (sticky || mant & 1 == 1)) {
        mant += 1;
    }
    let value = ldexp(mant as f64, exp + drop);
    if value.is_infinite() {
        return None;
    }
    Some(if neg { -value } else { value })
}

/// `x * 2^e`, exact when the result is representable.
fn ldexp(mut x: f64, mut e: i64) -> f64 {
    let step = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    while e > 1000 {
        x *= step(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= step(-1000);
        e += 1000;
    }
    x * step(e)
}

/// The exactly rounded mean of finite `data` (not empty).
pub(crate) fn exact_mean(data: &[f64]) -> f64 {
    let s = exact_sums(data);
    let n = Big::from_u128(data.len() as u128);
    ratio_to_f64(s.sum.neg, &s.sum.mag, &n, i64::from(s.scale)).expect("a mean of finite values is finite")
}

/// The sample variance of finite `data` (at least two values) as an exact fraction:
/// `num / den * 2^scale`.
fn variance_parts(data: &[f64]) -> (Big, Big, i64) {
    let n = data.len() as u128;
    let s = exact_sums(data);
    // n * Q - S^2 over n (n - 1), scaled by 2^(2 scale).
    let mut num = s.sum_sq.mul(&Big::from_u128(n));
    num.sub(&s.sum.mag.mul(&s.sum.mag));
    (num, Big::from_u128(n * (n - 1)), 2 * i64::from(s.scale))
}

/// The exactly rounded sample variance of finite `data` with at least two values; `None` when
/// it overflows.
pub(crate) fn exact_variance(data: &[f64]) -> Option<f64> {
    let (num, den, scale) = variance_parts(data);
    ratio_to_f64(false, &num, &den, scale)
}

/// The square root of the exact sample variance, rounded once (Python 3.11's `stdev`); `None`
/// when the variance overflows.
pub(crate) fn exact_std(data: &[f64]) -> Option<f64> {
    let (num, den, scale) = variance_parts(data);
    if num.is_zero() {
        return Some(0.0);
    }
    let var = ratio_to_f64(false, &num, &den, scale)?;
    let mut s = if var < f64::MIN_POSITIVE {
        // A variance below the normal range has a root far above it: estimate the root from
        // the variance scaled up by 2^1200, then scale it back by 2^-600.
        let scaled = ratio_to_f64(false, &num, &den, scale + 1200)?;
        ldexp(scaled.sqrt(), -600)
    } else {
        var.sqrt()
    };
    // The square root of the rounded variance is within an ulp or two of the answer: step to
    // the double whose rounding interval holds the exact root.
    for _ in 0..4 {
        let (m, e) = mantissa(s);
        // The midpoint above s, and below it (closer when s is a power of two).
        let above = (2 * u128::from(m) + 1, i64::from(e) - 1);
        let below = if m == 1u64 << 52 && e > -1074 {
            (4 * u128::from(m) - 1, i64::from(e) - 2)
        } else {
            (2 * u128::from(m) - 1, i64::from(e) - 1)
        };
        match cmp_square(&num, &den, scale, above) {
            Ordering::Greater => s = next_up(s),
            Ordering::Equal => return Some(if m & 1 == 0 { s } else { next_up(s) }),
            Ordering::Less => match cmp_square(&num, &den, scale, below) {
                Ordering::Less => s = next_down(s),
                Ordering::Equal => return Some(if m & 1 == 0 { s } else { next_down(s) }),
                Ordering::Greater => return Some(s),
            },
        }
    }
    Some(s)
}

/// `s = m * 2^e` for a positive finite `s`, `m` with the implicit bit.
fn mantissa(s: f64) -> (u64, i32) {
    let bits = s.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if exp == 0 { (frac, -1074) } else { (frac | (1u64 << 52), exp - 1075) }
}

fn next_up(s: f64) -> f64 {
    f64::from_bits(s.to_bits() + 1)
}

fn next_down(s: f64) -> f64 {
    f64::from_bits(s.to_bits() - 1)
}

/// Compares `num / den * 2^scale` with `(mid.0 * 2^mid.1)^2`.
fn cmp_square(num: &Big, den: &Big, scale: i64, mid: (u128, i64)) -> Ordering {
    let m = Big::from_u128(mid.0);
    let mut left = num.clone();
    let mut right = m.mul(&m).mul(den);
    let e = scale - 2 * mid.1;
    if e >= 0 {
        left.shl(e as u64);
    } else {
        right.shl((-e) as u64);
    }
    left.cmp_mag(&right)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn means_are_rounded_once() {
        assert_eq!(exact_mean(&[1.0, 2.0, 3.0, 5.0]), 2.75);
        // The naive sum loses the 1.0 entirely; the exact mean does not.
        assert_eq!(exact_mean(&[1e16, 1.0, -1e16]), 1.0 / 3.0);
        assert_eq!(exact_mean(&[0.1, 0.2, 0.3]), 0.2);
        assert_eq!(exact_mean(&[-0.5, -0.25]), -0.375);
        assert_eq!(exact_mean(&[f64::MAX, f64::MAX]), f64::MAX);
        assert_eq!(exact_mean(&[5e-324, 0.0]), 0.0); // half the least subnormal: tie to even
        assert_eq!(exact_mean(&[5e-324, 5e-324, 5e-324, 0.0]), 5e-324);
    }

    #[test]
    fn variances_are_rounded_once() {
        assert_eq!(exact_variance(&[1.0, 2.0, 3.0, 5.0]), Some(35.0 / 12.0));
        assert_eq!(exact_variance(&[2.0, 2.0]), Some(0.0));
        // Python: statistics.variance([0.1, 0.2, 0.3]) == 0.009999999999999998
        assert_eq!(exact_variance(&[0.1, 0.2, 0.3]), Some(0.009_999_999_999_999_998));
        assert_eq!(exact_variance(&[1e308, -1e308]), None);
        // Python: statistics.stdev of these; their variances round to 0 but their roots do not.
        assert_eq!(exact_std(&[5e-324, -5e-324, 0.0, 5e-324]), Some(5e-324));
        assert_eq!(exact_std(&[1e-170, 3e-170, 2e-170]), Some(1.000_000_000_000_000_2e-170));
        assert_eq!(exact_variance(&[1e-170, 3e-170, 2e-170]), Some(0.0));
    }

    proptest! {
        #[test]
        fn small_integer_data_agree_with_integer_arithmetic(data in proptest::collection::vec(-1000i64..1000, 2..40)) {
            let xs: Vec<f64> = data.iter().map(|&v| v as f64).collect();
            let n = data.len() as i128;
            let s: i128 = data.iter().map(|&v| i128::from(v)).sum();
            let q: i128 = data.iter().map(|&v| i128::from(v) * i128::from(v)).sum();
            // Integer numerators and denominators below 2^53 divide exactly in f64 arithmetic
            // rounded once.
            prop_assert_eq!(exact_mean(&xs), s as f64 / n as f64);
            prop_assert_eq!(exact_variance(&xs), Some((n * q - s * s) as f64 / (n * (n - 1)) as f64));
        }

        #[test]
        fn dyadic_data_agree_with_integer_arithmetic(data in proptest::collection::vec(-(1i64 << 30)..(1i64 << 30), 2..40)) {
            // Values k / 2^20: the exact mean is (sum k) / n / 2^20, rounded once.
            let scale = 1.0 / f64::from(1u32 << 20);
            let xs: Vec<f64> = data.iter().map(|&k| k as f64 * scale).collect();
            let s: i64 = data.iter().sum();
            prop_assert_eq!(exact_mean(&xs), s as f64 / data.len() as f64 * scale);
        }
    }
}
