//! Text normalisation: the content words of free text.
//!
//! [`normalize_tokens`] and [`for_each_token`] turn free text (a goal, a sentence) into
//! content words, as the reference's `text.py` does (`spec/maxim-reference.md` §13):
//! lowercase; split on whitespace, underscores and apostrophes; strip leading and trailing
//! punctuation; drop the [`STOP_WORDS`] (the reference's 125) and tokens shorter than three
//! characters; reduce each word with a light [`lemmatize`]r. The embedder, keyword recall and
//! goal extraction use them. (The canonical keys of concept names, which keep every word, are
//! the semantic layer's: `atl::names`.)
//!
//! ```
//! use maxim_core::text::{lemmatize, normalize_tokens};
//! assert_eq!(normalize_tokens("navigate_to_kitchen"), ["navigate", "kitchen"]);
//! assert_eq!(normalize_tokens("Grasping the mugs, then running!"), ["grasp", "mug", "run"]);
//! assert_eq!(normalize_tokens("What is she taking?"), ["taking"]);
//! assert_eq!(lemmatize("batteries"), "battery");
//! ```
//!
//! # Where this differs from the reference
//!
//! - The lemmatiser runs to a fixpoint ("meetings" → "meeting" → "meet"), so normalising the
//!   output again gives the same tokens. When a step of that chain yields a stop word or a
//!   token shorter than three characters ("beings" → "being", a stop word), the token keeps
//!   the last form of the chain that passes both filters ("beings") and still ends in a
//!   letter or digit.
//! - Undoubling after "-ing" leaves a final `l`, `s` or `z` alone, as Porter's stemmer does,
//!   so "calling" → "call" and "passing" → "pass" (the literal rule gives "cal" and "pas");
//!   such a stem counts as not doubled, so it needs the four letters of that case.
//! - `y` counts as a vowel in the stem checks ("crying" keeps its stem "cry" only because
//!   three letters are too few; "spraying" → "spray").
//! - Punctuation is any character that is not alphanumeric (Unicode), not only ASCII; the
//!   apostrophes that split tokens are `'`, `‘`, `’` and `ʼ`.

use std::borrow::Cow;

/// The stop words that [`normalize_tokens`] drops: the reference's 1.3.3 list of 125 words,
/// sorted.
///
/// Words shorter than three characters are dropped by the length filter anyway; they are
/// listed so that [`is_stop_word`] answers for the whole list.
pub const STOP_WORDS: [&str; 125] = [
    "a", "about", "after", "against", "all", "also", "although", "am", "an", "and", "another", "any", "are",
    "as", "at", "bad", "be", "because", "been", "before", "being", "best", "both", "but", "by", "can",
    "could", "did", "do", "does", "doing", "during", "even", "few", "for", "from", "good", "had", "has",
    "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "just", "less", "many", "may", "me", "might", "mine", "more", "most", "much", "must", "my",
    "myself", "no", "not", "now", "of", "on", "one", "only", "onto", "or", "other", "our", "ours", "over",
    "shall", "she", "should", "so", "some", "still", "such", "than", "that", "the", "their", "theirs",
    "them", "then", "there", "these", "they", "this", "those", "though", "through", "to", "too", "two",
    "under", "unless", "us", "very", "was", "we", "were", "what", "when", "where", "while", "who", "why",
    "will", "with", "would", "yes", "you", "your", "yours",
];

/// The longest stop word, in bytes.
const MAX_STOP_WORD_BYTES: usize = 8;

/// The shortest token, in characters, that [`normalize_tokens`] keeps.
pub const MIN_TOKEN_CHARS: usize = 3;

/// Whether `token` (lowercase) is one of the [`STOP_WORDS`].
///
/// ```
/// use maxim_core::text::is_stop_word;
/// assert!(is_stop_word("should") && is_stop_word("although") && is_stop_word("yes"));
/// assert!(!is_stop_word("shoulder"));
/// assert!(!is_stop_word("The")); // tokens are lowercased before the check
/// ```
pub fn is_stop_word(token: &str) -> bool {
    // Called for every token and every lemma step: the length test turns most words away,
    // and the rest cost seven integer comparisons (a search of string slices cost half as
    // much again over a whole keyword recall).
    let bytes = token.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_STOP_WORD_BYTES || bytes.contains(&0) {
        return false;
    }
    STOP_KEYS.binary_search(&pack_word(bytes)).is_ok()
}

/// The stop words packed by [`pack_word`], in the order of [`STOP_WORDS`], which is theirs.
const STOP_KEYS: [u64; STOP_WORDS.len()] = {
    let mut keys = [0; STOP_WORDS.len()];
    let mut i = 0;
    while i < STOP_WORDS.len() {
        keys[i] = pack_word(STOP_WORDS[i].as_bytes());
        i += 1;
    }
    keys
};

/// Packs up to eight bytes big-endian, padded with zeros: for words without a zero byte the
/// packing is one-to-one and orders the integers as the words sort.
const fn pack_word(bytes: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < 8 {
        key <<= 8;
        if i < bytes.len() {
            key |= bytes[i] as u64;
        }
        i += 1;
    }
    key
}

/// The normalised tokens of `text`, in order (see the [module docs](self)).
///
/// ```
/// use maxim_core::text::normalize_tokens;
/// assert_eq!(normalize_tokens("The robot's carried batteries"), ["robot", "carry", "battery"]);
/// assert!(normalize_tokens("it is to be").is_empty());
/// ```
pub fn normalize_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    normalize_tokens_into(text, &mut out);
    out
}

/// Appends the normalised tokens of `text` to `out` (which is not cleared).
///
/// ```
/// use maxim_core::text::normalize_tokens_into;
/// let mut tokens = vec!["first".to_owned()];
/// normalize_tokens_into("opening doors", &mut tokens);
/// assert_eq!(tokens, ["first", "open", "door"]);
/// ```
pub fn normalize_tokens_into(text: &str, out: &mut Vec<String>) {
    for_each_token(text, |token| out.push(token.to_owned()));
}

/// Calls `f` with each normalised token of `text`, in order, without allocating per token.
///
/// One scratch buffer is allocated per call (when the text has a word) and reused for every
/// token; this is the path the embedder takes.
///
/// ```
/// use maxim_core::text::for_each_token;
/// let mut lengths = Vec::new();
/// for_each_token("Grasping heavy mugs", |t| lengths.push(t.len()));
/// assert_eq!(lengths, [5, 5, 3]); // grasp, heavy, mug
/// ```
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    tokens_with(text, Mode::Plain, |t, _| f(t));
}

/// [`for_each_token`] for search: each token reduced further by [`search_stem`], and the
/// numbers shorter than [`MIN_TOKEN_CHARS`] kept (a token of one or two ASCII digits: "7",
/// "42"), which a question about a date or a count needs. The lexical index
/// (`maxim_core::lexical`) reads text through it, documents and queries alike.
///
/// ```
/// use maxim_core::text::{for_each_search_token, for_each_token};
/// let (mut search, mut plain) = (Vec::new(), Vec::new());
/// for_each_search_token("She moved on May 7, loving 2 cats", |t| search.push(t.to_owned()));
/// for_each_token("She moved on May 7, loving 2 cats", |t| plain.push(t.to_owned()));
/// assert_eq!(search, ["mov", "7", "lov", "2", "cat"]);
/// assert_eq!(plain, ["mov", "loving", "cat"]);
/// ```
pub fn for_each_search_token(text: &str, mut f: impl FnMut(&str)) {
    tokens_with(text, Mode::Search, |t, _| f(t));
}

/// Every word of `text` as the lexical index holds it, in order: the content words of
/// [`for_each_search_token`] (`f(token, false)`) and, between them, the
/// [function words](is_function_word) it drops (`f(token, true)`), lowercased and stripped
/// of punctuation but not lemmatised. The index keeps both so that "where", "from" or "up"
/// can tell two documents apart, and weighs the function words far below the content
/// words (see `maxim_core::lexical`). A token's kind depends on its text alone: no content
/// token is a function word.
///
/// ```
/// use maxim_core::text::for_each_index_token;
/// let mut tokens = Vec::new();
/// for_each_index_token("Where is Ivan from? I'm from Tallinn.", |t, function| tokens.push((t.to_owned(), function)));
/// let words: Vec<&str> = tokens.iter().map(|(t, _)| t.as_str()).collect();
/// assert_eq!(words, ["where", "is", "ivan", "from", "i", "m", "from", "tallinn"]);
/// assert!(tokens.iter().all(|(t, function)| *function == maxim_core::text::is_function_word(t)));
/// ```
pub fn for_each_index_token(text: &str, f: impl FnMut(&str, bool)) {
    tokens_with(text, Mode::Index, f);
}

/// The search form of a normalised token: two steps beyond the light lemmatiser, so that the
/// forms of a verb meet ("navigate", "navigated", "navigating"; "move", "moved",
/// "moving"):
///
/// - a final "-ing" that the lemmatiser kept is dropped when at least three characters with
///   a vowel remain ("moving" → "mov", "taking" → "tak"; "thing", "bring", "string" stay);
/// - then a final "e" after a consonant is dropped when at least three characters remain
///   ("navigate" → "navigat", "move" → "mov", "cable" → "cabl"; "free", "blue", "use" stay).
///
/// Like every light stemmer it joins a few words it should not ("care" and "car"); BM25's
/// weighting keeps the cost small. Only ASCII suffixes are looked at; the result is a prefix
/// of `token`.
///
/// ```
/// use maxim_core::text::search_stem;
/// assert_eq!(search_stem("navigate"), "navigat");
/// assert_eq!(search_stem("navigat"), "navigat"); // "navigating" and "navigated" lemmatise to it
/// assert_eq!(search_stem("moving"), "mov");
/// assert_eq!(search_stem("thing"), "thing");
/// assert_eq!(search_stem("free"), "free");
/// assert_eq!(search_stem("navigation"), "navigat");
/// assert_eq!(search_stem("station"), "station");
/// ```
pub fn search_stem(token: &str) -> &str {
    let mut end = token.len();
    let bytes = token.as_bytes();
    // "navigation" meets "navigate": a long "-ation" noun keeps its verb's stem.
    if let [stem @ .., b'a', b't', b'i', b'o', b'n'] = bytes
        && chars_in(stem) >= 4
        && has_vowel(stem)
    {
        return &token[..stem.len() + 2];
    }
    if let [stem @ .., b'i', b'n', b'g'] = bytes
        && chars_in(stem) >= 3
        && has_vowel(stem)
    {
        end = stem.len();
    }
    if let [stem @ .., c, b'e'] = &bytes[..end]
        && chars_in(stem) + 1 >= 3
        && c.is_ascii_alphabetic()
        && !matches!(c, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
    {
        end = stem.len() + 1;
    }
    &token[..end]
}

/// What [`tokens_with`] emits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// [`for_each_token`]: content words, lemmatised.
    Plain,
    /// [`for_each_search_token`]: content words in their search form, short numbers kept.
    Search,
    /// [`for_each_index_token`]: [`Mode::Search`] and the function words between them.
    Index,
}

/// The tokeniser behind [`for_each_token`], [`for_each_search_token`] and
/// [`for_each_index_token`]; `f` gets each token and whether it is a function word.
fn tokens_with(text: &str, mode: Mode, mut f: impl FnMut(&str, bool)) {
    let mut buf = String::new();
    for piece in text.split(is_token_separator) {
        if piece.is_empty() {
            continue;
        }
        buf.clear();
        push_lowercase(&mut buf, piece);
        let (start, end) = punctuation_bounds(&buf);
        let token = &buf[start..end];
        if mode != Mode::Plain && is_number(token) {
            // Digits end in no suffix the lemmatiser removes, and no stop word has one.
            f(token, false);
            continue;
        }
        if !passes_filters(token) {
            if mode == Mode::Index && !token.is_empty() {
                f(token, true);
            }
            continue;
        }
        let end = best_lemma_in_place(&mut buf, start, end);
        let token = &buf[start..end];
        if mode == Mode::Plain {
            f(token, false);
        } else {
            // A stem that is a stop word ("theme" → "them") would meet the function word:
            // the lemma stands instead.
            let stem = search_stem(token);
            f(if is_stop_word(stem) { token } else { stem }, false);
        }
    }
}

/// Whether `token` is a non-empty run of ASCII digits.
fn is_number(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a lowercase token is a function word as [`for_each_index_token`] marks it: a
/// [stop word](STOP_WORDS), or a word shorter than [`MIN_TOKEN_CHARS`] that is not a number.
///
/// ```
/// use maxim_core::text::is_function_word;
/// assert!(is_function_word("where") && is_function_word("up") && is_function_word("m"));
/// assert!(!is_function_word("7") && !is_function_word("kitten"));
/// ```
pub fn is_function_word(token: &str) -> bool {
    !token.is_empty() && !is_number(token) && !passes_filters(token)
}

/// The lemma of the lowercase word `word` by the light lemmatiser, applied until it no
/// longer changes.
///
/// One step applies the first rule that matches, with lengths counted in characters:
///
/// - "-ing" (length > 4): when the stem ends in a doubled consonant other than `l`, `s`, `z`,
///   undouble it and drop "-ing" if the undoubled stem has at least three characters and a
///   vowel ("running" → "run", "adding" stays); otherwise drop "-ing" if the stem has at
///   least four characters and a vowel ("grasping" → "grasp", "calling" → "call"; "taking",
///   "coming", "thing" stay);
/// - "-ed" (length > 3): "-eed" is kept ("need"), "-ied" becomes "y" ("carried" → "carry"),
///   otherwise drop "-ed" when the stem has at least two characters and a vowel
///   ("grasped" → "grasp"), else drop only the "d" ("shed" → "she");
/// - "-ies" (length > 4) becomes "y" ("batteries" → "battery");
/// - "-s" but not "-ss" (length > 3) is dropped ("mugs" → "mug", "glass" stays).
///
/// Every step makes the word shorter, so the fixpoint is reached in a few steps; a single
/// pass is not idempotent ("meetings" → "meeting" → "meet"). Vowels are `a e i o u y`.
/// The rules look at ASCII suffixes only, so uppercase or non-Latin words come back as they
/// are; the result borrows `word` unless a "y" was added.
///
/// ```
/// use maxim_core::text::lemmatize;
/// assert_eq!(lemmatize("grasping"), "grasp");
/// assert_eq!(lemmatize("running"), "run");
/// assert_eq!(lemmatize("mugs"), "mug");
/// assert_eq!(lemmatize("carried"), "carry");
/// assert_eq!(lemmatize("meetings"), "meet");
/// assert_eq!(lemmatize("glass"), "glass");
/// ```
pub fn lemmatize(word: &str) -> Cow<'_, str> {
    let mut cur = Cow::Borrowed(word);
    loop {
        match lemma_step(&cur) {
            None => return cur,
            Some(Step::Truncate(n)) => match &mut cur {
                Cow::Borrowed(s) => *s = &s[..n],
                Cow::Owned(s) => s.truncate(n),
            },
            Some(Step::ReplaceWithY(n)) => {
                let mut s = cur.into_owned();
                s.truncate(n);
                s.push('y');
                cur = Cow::Owned(s);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Internals.

fn is_token_separator(c: char) -> bool {
    c.is_whitespace() || c == '_' || is_apostrophe(c)
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{02BC}')
}

fn is_punctuation(c: char) -> bool {
    !c.is_alphanumeric()
}

/// The byte range of `s` left once the punctuation (any character that is not alphanumeric)
/// around it is stripped.
///
/// ```
/// use maxim_core::text::punctuation_bounds;
/// assert_eq!(punctuation_bounds("(mug)!"), (1, 4));
/// assert_eq!(punctuation_bounds("?!"), (2, 2));
/// ```
pub fn punctuation_bounds(s: &str) -> (usize, usize) {
    let start = s.len() - s.trim_start_matches(is_punctuation).len();
    let end = start + s[start..].trim_end_matches(is_punctuation).len();
    (start, end)
}

/// Appends the lowercase form of `s` to `buf`, character by character (no final-sigma
/// context, so the result of a piece does not depend on its neighbours).
///
/// ```
/// use maxim_core::text::push_lowercase;
/// let mut buf = String::from("a ");
/// push_lowercase(&mut buf, "ÉCOLE");
/// assert_eq!(buf, "a école");
/// ```
pub fn push_lowercase(buf: &mut String, s: &str) {
    if s.is_ascii() {
        let start = buf.len();
        buf.push_str(s);
        buf[start..].make_ascii_lowercase();
    } else {
        for c in s.chars() {
            buf.extend(c.to_lowercase());
        }
    }
}

/// The number of characters of `s` (its length when it is ASCII).
///
/// ```
/// assert_eq!(maxim_core::text::char_count("été"), 3);
/// ```
pub fn char_count(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
}

fn passes_filters(token: &str) -> bool {
    char_count(token) >= MIN_TOKEN_CHARS && !is_stop_word(token)
}

/// The characters in the UTF-8 bytes `s` (which start at a character boundary).
fn chars_in(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

fn has_vowel(s: &[u8]) -> bool {
    s.iter().any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

/// One step of the lemmatiser, as byte lengths of the word's prefix to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Keep the first `n` bytes.
    Truncate(usize),
    /// Keep the first `n` bytes and append "y".
    ReplaceWithY(usize),
}

fn lemma_step(word: &str) -> Option<Step> {
    // Every rule needs an ASCII suffix; cutting before an ASCII byte is always at a character
    // boundary. Byte patterns keep this free of calls (it runs for every token).
    let bytes = word.as_bytes();
    let len = bytes.len();
    if !matches!(bytes.last(), Some(b'g' | b'd' | b's')) {
        return None;
    }
    let n_chars = char_count(word);
    match bytes {
        [stem @ .., b'i', b'n', b'g'] if n_chars > 4 => match stem {
            [rest @ .., x, y] if x == y && is_undoubled_consonant(*y) => {
                let undoubled = &stem[..=rest.len()];
                (chars_in(undoubled) >= 3 && has_vowel(undoubled)).then_some(Step::Truncate(undoubled.len()))
            }
            _ => (chars_in(stem) >= 4 && has_vowel(stem)).then_some(Step::Truncate(stem.len())),
        },
        [.., b'e', b'e', b'd'] if n_chars > 3 => None,
        [.., b'i', b'e', b'd'] if n_chars > 3 => Some(Step::ReplaceWithY(len - 3)),
        [stem @ .., b'e', b'd'] if n_chars > 3 => {
            if n_chars - 2 >= 2 && has_vowel(stem) {
                Some(Step::Truncate(len - 2))
            } else {
                Some(Step::Truncate(len - 1))
            }
        }
        [.., b'i', b'e', b's'] if n_chars > 4 => Some(Step::ReplaceWithY(len - 3)),
        [.., x, b's'] if *x != b's' && n_chars > 3 => Some(Step::Truncate(len - 1)),
        _ => None,
    }
}
/// A doubled final consonant that "-ing" removal undoubles ("runn" → "run"); `l`, `s` and `z`
/// stay doubled ("call", "pass", "buzz").
fn is_undoubled_consonant(b: u8) -> bool {
    b.is_ascii_lowercase() && !matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y' | b'l' | b's' | b'z')
}

/// Lemmatises `buf[start..end]` (a token that passes the filters) in place and returns the
/// end of the kept form: the last form of the lemma chain that still passes the filters and
/// still ends in a letter or digit ("x-s" must not become "x-", which a second pass would
/// strip).
fn best_lemma_in_place(buf: &mut String, start: usize, end: usize) -> usize {
    let mut best_end = end;
    let mut cur_end = end;
    while let Some(step) = lemma_step(&buf[start..cur_end]) {
        match step {
            Step::Truncate(n) => {
                cur_end = start + n;
                let form = &buf[start..cur_end];
                if passes_filters(form) && form.ends_with(|c: char| !is_punctuation(c)) {
                    best_end = cur_end;
                }
            }
            Step::ReplaceWithY(n) => {
                // A "y" ends the chain: no rule matches a word ending in "y".
                let stem = &buf[start..start + n];
                if char_count(stem) + 1 >= MIN_TOKEN_CHARS && !is_stop_word_with_y(stem) {
                    buf.truncate(start + n);
                    buf.push('y');
                    return buf.len();
                }
                break;
            }
        }
    }
    best_end
}

/// Whether `stem` + "y" is a stop word, without building it.
fn is_stop_word_with_y(stem: &str) -> bool {
    STOP_WORDS.iter().any(|w| w.len() == stem.len() + 1 && w.ends_with('y') && w.starts_with(stem))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn toks(text: &str) -> Vec<String> {
        normalize_tokens(text)
    }

    #[test]
    fn reference_examples() {
        assert_eq!(toks("navigate_to_kitchen"), ["navigate", "kitchen"]);
        assert_eq!(toks("grasping"), ["grasp"]);
        assert_eq!(toks("running"), ["run"]);
        assert_eq!(toks("mugs"), ["mug"]);
        assert_eq!(toks("carried"), ["carry"]);
        assert_eq!(toks("batteries"), ["battery"]);
    }

    #[test]
    fn stop_words_are_the_reference_list_sorted() {
        assert_eq!(STOP_WORDS.len(), 125);
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        let core = "a an the to in on of for is it and or but not with at by from as be was were been \
                    are am do does did has had have will would could should can this that these those \
                    i me my we our her his its yes when what you she";
        for w in core.split_whitespace() {
            assert!(is_stop_word(w), "{w}");
        }
        assert!(!is_stop_word("kitchen"));
        assert!(!is_stop_word(""));
        assert!(STOP_WORDS.iter().all(|w| w.len() <= MAX_STOP_WORD_BYTES));
        assert!(STOP_KEYS.windows(2).all(|k| k[0] < k[1]), "the packed keys sort as the words");
        assert!(!is_stop_word("a\0") && !is_stop_word("the\0\0"));
        for w in STOP_WORDS {
            for near in [format!("{w}s"), format!("x{w}"), w[1..].to_owned(), w.to_uppercase()] {
                assert_eq!(is_stop_word(&near), STOP_WORDS.contains(&near.as_str()), "{near}");
            }
        }
    }

    #[test]
    fn splitting_and_stripping() {
        assert_eq!(toks("  Open\tthe\nDOOR  "), ["open", "door"]);
        assert_eq!(toks("robot's arm"), ["robot", "arm"]);
        assert_eq!(toks("don’t stop"), ["don", "stop"]);
        assert_eq!(toks("(kitchen), \"table\"... [drawer]!"), ["kitchen", "table", "drawer"]);
        // Interior punctuation stays, only the ends are stripped.
        assert_eq!(toks("e-mail v2.0"), ["e-mail", "v2.0"]);
        assert_eq!(toks("__init__"), ["init"]);
        assert_eq!(toks("go up to it"), Vec::<String>::new());
        assert_eq!(toks(""), Vec::<String>::new());
        assert_eq!(toks("!!! ... ---"), Vec::<String>::new());
    }

    #[test]
    fn stop_words_are_checked_before_lemmatising() {
        // "does" and "this" would lemmatise to "doe" and "thi"; they are stop words first.
        assert_eq!(toks("does this work"), ["work"]);
        // The pronouns and question words of the reference's list are not content words.
        assert_eq!(toks("What did she say to you when her mug broke?"), ["say", "mug", "broke"]);
    }

    #[test]
    fn lemma_chain_keeps_the_last_form_that_passes_the_filters() {
        assert_eq!(lemmatize("beings"), "being");
        assert_eq!(toks("beings"), ["beings"]); // "being" is a stop word
        assert_eq!(toks("meetings"), ["meet"]);
        assert_eq!(toks("tied"), ["tied"]); // "ty" is too short
    }

    #[test]
    fn lemmatiser_rules() {
        let cases = [
            ("grasping", "grasp"),
            ("running", "run"),
            ("sitting", "sit"),
            ("calling", "call"),
            ("passing", "pass"),
            ("buzzing", "buzz"),
            ("thing", "thing"),
            ("sting", "sting"),
            ("sing", "sing"),
            ("trying", "trying"),
            ("spraying", "spray"),
            ("taking", "taking"),
            ("coming", "coming"),
            ("having", "having"),
            ("using", "using"),
            ("adding", "adding"),
            ("stopping", "stop"),
            ("reading", "read"),
            ("needed", "need"),
            ("agreed", "agreed"),
            ("carried", "carry"),
            ("tied", "ty"),
            ("grasped", "grasp"),
            ("shed", "she"),
            ("bed", "bed"),
            ("batteries", "battery"),
            ("ties", "tie"),
            ("mugs", "mug"),
            ("glass", "glass"),
            ("bus", "bus"),
            ("is", "is"),
            ("", ""),
            ("RUNNING", "RUNNING"),
            ("naïvely", "naïvely"),
            ("façades", "façade"),
            ("ççing", "ççing"),
        ];
        for (word, lemma) in cases {
            assert_eq!(lemmatize(word), lemma, "{word}");
        }
    }

    #[test]
    fn lemmatize_borrows_unless_a_y_is_added() {
        assert!(matches!(lemmatize("meetings"), Cow::Borrowed("meet")));
        assert!(matches!(lemmatize("carried"), Cow::Owned(_)));
    }

    #[test]
    fn unicode_is_lowercased_and_counted_in_characters() {
        assert_eq!(toks("ÉCOLE Straße ÜBER"), ["école", "straße", "über"]);
        // Three characters but more than three bytes: kept.
        assert_eq!(toks("été ab"), ["été"]);
        // A capital whose lowercase ends in a combining mark: the mark is stripped.
        assert_eq!(toks("FOOİ"), ["fooi"]);
        assert_eq!(toks("日本語 テスト"), ["日本語", "テスト"]);
    }

    #[test]
    fn into_appends_and_for_each_sees_the_same_tokens() {
        let mut out = vec!["keep".to_owned()];
        normalize_tokens_into("Opening doors", &mut out);
        assert_eq!(out, ["keep", "open", "door"]);
        let mut seen = Vec::new();
        for_each_token("Opening doors", |t| seen.push(t.to_owned()));
        assert_eq!(seen, ["open", "door"]);
    }

    fn wordish() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("running".to_owned()),
            Just("beings".to_owned()),
            Just("carried".to_owned()),
            Just("meetings".to_owned()),
            Just("the".to_owned()),
            Just("Mugs".to_owned()),
            Just("don't".to_owned()),
            Just("room_1".to_owned()),
            "[a-zA-Z]{1,10}(ing|ed|ies|s|ss|eed|ied)?",
            "[a-z0-9]{1,4}",
            "\\PC{1,6}",
        ];
        prop::collection::vec((word, "[ _.,!'-]{1,2}"), 0..8)
            .prop_map(|parts| parts.into_iter().map(|(w, sep)| w + &sep).collect())
    }

    proptest! {
        #[test]
        fn normalising_is_idempotent(text in prop_oneof![wordish(), any::<String>()]) {
            let once = normalize_tokens(&text);
            let twice = normalize_tokens(&once.join(" "));
            prop_assert_eq!(&once, &twice);
            for t in &once {
                prop_assert!(t.chars().count() >= MIN_TOKEN_CHARS && !is_stop_word(t));
            }
        }

        #[test]
        fn search_tokens_are_the_tokens_and_the_short_numbers(text in prop_oneof![wordish(), any::<String>(), "[a-z0-9 ,.]{0,30}"]) {
            let mut search = Vec::new();
            for_each_search_token(&text, |t| search.push(t.to_owned()));
            let short_number = |t: &String| t.len() < MIN_TOKEN_CHARS && t.bytes().all(|b| b.is_ascii_digit());
            let without: Vec<String> = search.iter().filter(|t| !short_number(t)).cloned().collect();
            let stemmed: Vec<String> = normalize_tokens(&text).iter().map(|t| search_stem(t).to_owned()).collect();
            prop_assert_eq!(without, stemmed);
            prop_assert!(search.iter().all(|t| !t.is_empty()));
        }

        #[test]
        fn lemmatize_reaches_a_fixpoint(
            word in prop_oneof!["[a-z]{0,12}(ing|ed|ies|s|eed|ied)?", any::<String>()],
        ) {
            let lemma = lemmatize(&word).into_owned();
            prop_assert_eq!(lemmatize(&lemma), lemma.as_str());
            prop_assert!(lemma.chars().count() <= word.chars().count());
        }
    }
}
