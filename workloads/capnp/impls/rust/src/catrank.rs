//! catrank (SPEC §3.3): up to 999 search results with a url and a snippet of words; the
//! server scores the snippets that mention a cat or a dog and answers the list sorted.

use crate::catrank_capnp::{search_result, search_result_list};
use crate::modes::Case;
use crate::rng::FastRand;
use crate::stream::MAX_MESSAGE_WORDS;
use crate::Failure;
use capnp::traits::HasStructSize;
use memchr::memmem::Finder;
use std::cmp::Ordering;
use std::sync::LazyLock;

/// The C++ suite's prefix, with its trailing `/` (SPEC §3.3).
const URL_PREFIX: &[u8] = b"http://example.com/";
const WORDS: [&str; 13] = [
    "foo ", "bar ", "baz ", "qux ", "quux ", "corge ", "grault ", "garply ", "waldo ", "fred ",
    "plugh ", "xyzzy ", "thud ",
];
/// WORDS, each padded with zeros to 8 bytes (the longest is 7).
const PADDED_WORDS: [[u8; 8]; 13] = {
    let mut padded = [[0u8; 8]; 13];
    let mut i = 0;
    while i < WORDS.len() {
        let word = WORDS[i].as_bytes();
        let mut j = 0;
        while j < word.len() {
            padded[i][j] = word[j];
            j += 1;
        }
        i += 1;
    }
    padded
};
/// Words of one SearchResult in a message (one data word for the score, two pointers), as
/// the generated code lays it out.
const RESULT_WORDS: u64 = {
    let size = <search_result::Builder<'static> as HasStructSize>::STRUCT_SIZE;
    size.data as u64 + size.pointers as u64
};
/// Most words in one snippet: two runs of at most 19 (`fastRand(20)`).
const MAX_WORDS: usize = 2 * 19;

// Searchers built once: a snippet is searched as bytes (a hostile snippet need not be UTF-8,
// and the SPEC's test is on bytes).
static CAT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b" cat "));
static DOG: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b" dog "));

/// The case (SPEC §3.3): `SearchResultList` both ways, the client expects a count of results
/// with a cat and no dog.
pub struct CatRank;

impl Case for CatRank {
    type Request = search_result_list::Owned;
    type Response = search_result_list::Owned;
    type Expected = u32;

    fn build_request(rng: &mut FastRand, request: search_result_list::Builder<'_>) -> u32 {
        let count = rng.below(1000);
        let mut list = request.init_results(count);
        let mut good = 0;
        for i in 0..count {
            let mut result = list.reborrow().get(i);
            // count <= 999, so the scores run from 1000 down to 2.
            result.set_score(f64::from(1000 - i));
            let (is_cat, is_dog) = random_texts(rng, result);
            good += u32::from(is_cat && !is_dog);
        }
        good
    }

    fn serve(
        request: search_result_list::Reader<'_>,
        response: search_result_list::Builder<'_>,
    ) -> Result<(), Failure> {
        let results = request.get_results()?;
        // Every result becomes RESULT_WORDS of response and one entry to sort. A list of empty
        // structs costs a sender nothing per element (the reader counts each as one word of
        // traversal, so 8 Mi of them pass), so the count is bounded here: a response over the
        // 64 MiB cap could not be read by any client (SPEC §6), and is not built.
        if u64::from(results.len()) * RESULT_WORDS > MAX_MESSAGE_WORDS as u64 {
            return Err(Failure(format!(
                "{} results: the response would exceed the {MAX_MESSAGE_WORDS}-word cap",
                results.len()
            )));
        }
        // (new score, index in the request): sorted, then copied out in that order.
        let mut scored = Vec::with_capacity(results.len() as usize);
        for (i, result) in (0..).zip(results) {
            let snippet = result.get_snippet()?.as_bytes();
            let mut score = result.get_score();
            if CAT.find(snippet).is_some() {
                score *= 10000.0;
            }
            if DOG.find(snippet).is_some() {
                score /= 10000.0;
            }
            scored.push((score, i));
        }
        // Equal scores (hostile input only) keep the request's order, which the SPEC leaves
        // open: the index breaks ties, so the unstable sort (no buffer) is deterministic.
        scored.sort_unstable_by(|a, b| descending_nan_last(a.0, b.0).then(a.1.cmp(&b.1)));

        let mut list = response.init_results(results.len());
        for (i, (score, from)) in (0..).zip(scored) {
            let from = results.get(from);
            let mut to = list.reborrow().get(i);
            to.set_score(score);
            // One copy of each text, from the request's bytes into the response's.
            to.set_url(from.get_url()?);
            to.set_snippet(from.get_snippet()?);
        }
        Ok(())
    }

    fn check(response: search_result_list::Reader<'_>, expected: u32) -> Result<(), Failure> {
        // Leading results only: the count stops at the first that is not above 1001 (NaN
        // included), so an unsorted or unscaled response fails the check.
        let good = response
            .get_results()?
            .iter()
            .take_while(|result| result.get_score() > 1001.0)
            .count();
        if good == expected as usize {
            Ok(())
        } else {
            Err(Failure(format!(
                "expected {expected} leading results scored above 1001, got {good}"
            )))
        }
    }
}

/// The order of the response: higher scores first, NaN after every number. A total order
/// (f64::total_cmp), so the sort is well defined whatever a hostile request holds.
pub fn descending_nan_last(a: f64, b: f64) -> Ordering {
    a.is_nan().cmp(&b.is_nan()).then_with(|| b.total_cmp(&a))
}

/// Writes `bytes` at `at` in `text`; returns the position after them.
#[inline]
fn put(text: &mut [u8], at: usize, bytes: &[u8]) -> usize {
    let end = at + bytes.len();
    text[at..end].copy_from_slice(bytes);
    end
}

/// Writes word number `word` at `at` in `text`; returns the position after it. Where the
/// text has room, the word goes as one fixed 8-byte copy of its padded form (a single move;
/// the padding is overwritten by what follows), instead of a memcpy call of its length.
#[inline]
fn put_word(text: &mut [u8], at: usize, word: u8) -> usize {
    let word = usize::from(word);
    match text.get_mut(at..at + 8) {
        Some(room) => {
            room.copy_from_slice(&PADDED_WORDS[word]);
            at + WORDS[word].len()
        }
        None => put(text, at, WORDS[word].as_bytes()),
    }
}

/// Draws one result's url and snippet in the SPEC's order and writes both in place; returns
/// (isCat, isDog).
///
/// Each text is built where it lives: its length is known before it is written (the url's
/// from its letter count, the snippet's by drawing the word numbers first into a small
/// array), so `init_*` reserves it once and the bytes go in directly, never through a String.
pub fn random_texts(rng: &mut FastRand, mut result: search_result::Builder<'_>) -> (bool, bool) {
    let letters = rng.below(100) as usize;
    let url = result
        .reborrow()
        .init_url((URL_PREFIX.len() + letters) as u32)
        .as_bytes_mut();
    let (prefix, rest) = url.split_at_mut(URL_PREFIX.len());
    prefix.copy_from_slice(URL_PREFIX);
    for letter in rest {
        *letter = b'a' + rng.below(26) as u8;
    }

    let is_cat = rng.below(8) == 0;
    let is_dog = rng.below(8) == 0;

    let mut words = [0u8; MAX_WORDS];
    let mut len = 1; // the leading " "
    let before = rng.below(20) as usize;
    for word in &mut words[..before] {
        *word = rng.below(13) as u8;
        len += WORDS[usize::from(*word)].len();
    }
    len += 4 * (usize::from(is_cat) + usize::from(is_dog));
    let after = rng.below(20) as usize;
    for word in &mut words[before..before + after] {
        *word = rng.below(13) as u8;
        len += WORDS[usize::from(*word)].len();
    }

    let snippet = result.init_snippet(len as u32).as_bytes_mut();
    let mut at = put(snippet, 0, b" ");
    for &word in &words[..before] {
        at = put_word(snippet, at, word);
    }
    if is_cat {
        at = put(snippet, at, b"cat ");
    }
    if is_dog {
        at = put(snippet, at, b"dog ");
    }
    for &word in &words[before..before + after] {
        at = put_word(snippet, at, word);
    }
    (is_cat, is_dog)
}

#[cfg(test)]
mod tests {
    use super::*;
    use capnp::message;

    /// A catrank request of (score, snippet) pairs, served; returns the response's (url, score).
    fn catrank_serve(results: &[(f64, &str)]) -> Vec<(String, f64)> {
        let mut request = message::Builder::new_default();
        {
            let root: search_result_list::Builder<'_> = request.init_root();
            let mut list = root.init_results(results.len() as u32);
            for (i, (score, snippet)) in results.iter().enumerate() {
                let mut r = list.reborrow().get(i as u32);
                r.set_url(format!("u{i}").as_str());
                r.set_score(*score);
                r.set_snippet(*snippet);
            }
        }
        let mut response = message::Builder::new_default();
        CatRank::serve(request.get_root_as_reader().unwrap(), response.init_root()).unwrap();
        let list: search_result_list::Reader<'_> = response.get_root_as_reader().unwrap();
        list.get_results()
            .unwrap()
            .iter()
            .map(|r| (r.get_url().unwrap().to_string().unwrap(), r.get_score()))
            .collect()
    }

    #[test]
    fn catrank_scores_cats_and_dogs_and_sorts_nan_last() {
        let got = catrank_serve(&[
            (5.0, " foo cat bar "),
            (f64::NAN, " cat "),
            (6.0, " dog "),
            (7.0, " cat dog "),
            (8.0, " cats concat "),
            (f64::NEG_INFINITY, " x "),
            (9.0, "cat dog"), // not space-delimited: neither word matches
        ]);
        let order: Vec<&str> = got.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(order, ["u0", "u6", "u4", "u3", "u2", "u5", "u1"]);
        assert_eq!(got[0].1, 50000.0);
        assert_eq!(got[3].1, 7.0 * 10000.0 / 10000.0);
        assert_eq!(got[4].1, 6.0 / 10000.0);
        assert!(got[6].1.is_nan());
    }

    #[test]
    fn catrank_snippet_search_is_on_bytes_not_utf8() {
        let mut request = message::Builder::new_default();
        {
            let root: search_result_list::Builder<'_> = request.init_root();
            let mut r = root.init_results(1).get(0);
            r.set_score(2.0);
            // Invalid UTF-8 around the cat: the server must not care.
            let bytes = r.init_snippet(7).as_bytes_mut();
            bytes.copy_from_slice(b"\xff cat \xfe");
        }
        let mut response = message::Builder::new_default();
        CatRank::serve(request.get_root_as_reader().unwrap(), response.init_root()).unwrap();
        let list: search_result_list::Reader<'_> = response.get_root_as_reader().unwrap();
        assert_eq!(list.get_results().unwrap().get(0).get_score(), 20000.0);
    }
}
