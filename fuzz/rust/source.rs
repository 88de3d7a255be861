//! The in-memory input of a fuzz target, read the way a pipe hands data out.
//!
//! Whole (`chunked` false): every read gets as much as it asks for. Chunked: each read gets at
//! most 1..=64 bytes, a size taken from the input's own bytes, so the fuzzer also explores
//! where reads split frames, headers and words. A target runs both and asserts they agree:
//! a reader that depends on how its input arrives is a bug the whole run alone cannot show.
//!
//! Shared by the Rust fuzz crates of the lab, each including it as its `source` module
//! (`#[path]`), like `guard.rs`.

use std::io::{self, Read};

pub struct Source<'a> {
    data: &'a [u8],
    pos: usize,
    reads: usize,
    chunked: bool,
}

impl<'a> Source<'a> {
    pub fn new(data: &'a [u8], chunked: bool) -> Self {
        Source {
            data,
            pos: 0,
            reads: 0,
            chunked,
        }
    }
}

impl Read for Source<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let rest = &self.data[self.pos..];
        let mut n = out.len().min(rest.len());
        if self.chunked && !self.data.is_empty() {
            let b = self.data[self.reads % self.data.len()] as usize;
            n = n.min(1 + (b ^ self.reads) % 64);
        }
        out[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        self.reads += 1;
        Ok(n)
    }
}
