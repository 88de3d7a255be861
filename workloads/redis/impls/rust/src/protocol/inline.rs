//! Inline commands: `SET key "hello world"\r\n` typed into telnet.
//!
//! redis splits the line with `sdssplitargs`, whose rules this reproduces byte for byte:
//! arguments are separated by blanks; `"…"` understands `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a`
//! and `\<any>`; `'…'` understands only `\'`; a closing quote must be followed by a blank or
//! the end of the line; a quote may start in the middle of an argument (`a"b c"` is `ab c`).

/// C's `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Splits `line` (without its line ending) into arguments appended to `out`, recording each
/// argument's range in `ranges`. Returns `Err(())` for unbalanced quotes.
///
/// `line` never contains NUL here (the caller treats a NUL before the newline as "no line
/// yet", as redis's `strchr` does), so the C code's end-of-string checks become
/// end-of-slice checks.
#[allow(clippy::result_unit_err)]
pub fn split_args(
    line: &[u8],
    out: &mut Vec<u8>,
    ranges: &mut Vec<(usize, usize)>,
) -> Result<(), ()> {
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Ok(());
        }
        let start = out.len();
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let c = at(p);
            if in_double {
                if c == b'\\' && at(p + 1) == b'x' {
                    if let (Some(h), Some(l)) = (hex_value(at(p + 2)), hex_value(at(p + 3))) {
                        out.push(h * 16 + l);
                        p += 4;
                        continue;
                    }
                }
                if c == b'\\' && p + 1 < line.len() {
                    p += 1;
                    out.push(match line[p] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if p + 1 < line.len() && !is_space(line[p + 1]) {
                        return Err(());
                    }
                    p += 1;
                    break;
                } else if p >= line.len() {
                    return Err(());
                } else {
                    out.push(c);
                }
            } else if in_single {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    out.push(b'\'');
                } else if c == b'\'' {
                    if p + 1 < line.len() && !is_space(line[p + 1]) {
                        return Err(());
                    }
                    p += 1;
                    break;
                } else if p >= line.len() {
                    return Err(());
                } else {
                    out.push(c);
                }
            } else if p >= line.len() || matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                // Only these four end an unquoted argument (not \v or \f, although leading
                // blanks of every kind are skipped above).
                if p < line.len() {
                    p += 1;
                }
                break;
            } else if c == b'"' {
                in_double = true;
            } else if c == b'\'' {
                in_single = true;
            } else {
                out.push(c);
            }
            p += 1;
        }
        ranges.push((start, out.len()));
    }
}
