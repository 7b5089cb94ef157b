//! What the page reader is given: at most [`MAX_HTML_BYTES`].

/// The most HTML read from one page. Larger pages are cut at a character
/// boundary: the head and the top of the body hold what we extract.
pub const MAX_HTML_BYTES: usize = 2 * 1024 * 1024;

/// Cuts `s` to at most `max` bytes at a character boundary.
pub(crate) fn cap_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
