//! The iteration loops of SPEC §4-5: `object`, `bytes`, `client`, `server` and the
//! self-contained `pipe`, each with a fresh message builder per message (`no-reuse`) or
//! builders whose first segment is scratch space allocated once (`reuse`), timed as the
//! report needs (warm-up apart, CPU over the timed iterations only).

use crate::carsales::CarSales;
use crate::catrank::CatRank;
use crate::eval::Eval;
use crate::rng::FastRand;
use crate::stream::{Compression, FlatBuffer, MessageReader, MessageWriter, READER_OPTIONS};
use crate::Failure;
use capnp::message::{self, HeapAllocator, ReaderSegments, ScratchSpaceHeapAllocator};
use capnp::serialize;
use capnp::serialize_packed;
use capnp::traits::Owned;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The library this program measures, as the report names it (Cargo.toml pins it exactly).
pub const LIBRARY: &str = "capnp (Rust) 0.27.3";

/// Words of scratch space per builder with `reuse`: 1 MiB, the upstream suites' size, far
/// above any generated message (the largest possible catrank request is ~53 Ki words), so a
/// request or a response is always one segment in memory that is zeroed once and then only
/// where it was used.
pub const SCRATCH_WORDS: usize = 128 * 1024;

/// One case of SPEC §3: how a client builds a request (and what it then expects), how a
/// server answers it, and how the client checks the answer.
pub trait Case {
    type Request: Owned;
    type Response: Owned;
    type Expected: Copy;

    /// Draws one request into `request`; returns what the response must say.
    fn build_request(
        rng: &mut FastRand,
        request: <Self::Request as Owned>::Builder<'_>,
    ) -> Self::Expected;

    /// The server's work: reads `request` (which may be hostile) and fills `response`.
    fn serve(
        request: <Self::Request as Owned>::Reader<'_>,
        response: <Self::Response as Owned>::Builder<'_>,
    ) -> Result<(), Failure>;

    /// The client's check; the error says what was expected and what came.
    fn check(
        response: <Self::Response as Owned>::Reader<'_>,
        expected: Self::Expected,
    ) -> Result<(), Failure>;
}

/// SPEC §5's CASE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseName {
    CarSales,
    CatRank,
    Eval,
}

/// SPEC §5's MODE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Object,
    Bytes,
    Pipe,
    Client,
    Server,
}

/// SPEC §5's REUSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    Reuse,
    NoReuse,
}

impl CaseName {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseName::CarSales => "carsales",
            CaseName::CatRank => "catrank",
            CaseName::Eval => "eval",
        }
    }
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Object => "object",
            Mode::Bytes => "bytes",
            Mode::Pipe => "pipe",
            Mode::Client => "client",
            Mode::Server => "server",
        }
    }
}

impl Reuse {
    pub fn as_str(self) -> &'static str {
        match self {
            Reuse::Reuse => "reuse",
            Reuse::NoReuse => "no-reuse",
        }
    }
}

/// One run, as the command line asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub case: CaseName,
    pub mode: Mode,
    pub reuse: Reuse,
    pub compression: Compression,
    /// Timed iterations (1 ..= 10^9).
    pub iterations: u64,
}

impl Config {
    /// Untimed iterations before the timed ones (SPEC §5).
    pub fn warmup(&self) -> u64 {
        self.iterations / 20
    }

    /// The five words of the command line, as `pipe` passes them to its server.
    pub fn argv(&self, mode: Mode) -> [String; 5] {
        [
            self.case.as_str().to_owned(),
            mode.as_str().to_owned(),
            self.reuse.as_str().to_owned(),
            self.compression.as_str().to_owned(),
            self.iterations.to_string(),
        ]
    }
}

/// The measured part of a report (SPEC §5).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub setup_s: f64,
    pub warmup_s: f64,
    pub elapsed_s: f64,
    pub cpu_s: f64,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub checked: u64,
    pub server_cpu_s: Option<f64>,
}

/// What a run ends with: a report, or a server's count of requests answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Report(Figures),
    Served(u64),
}

/// Runs `config`; `started` is the first instant of `main` (the report's setup_s).
pub fn run(config: &Config, started: Instant) -> Result<Outcome, Failure> {
    match config.case {
        CaseName::CarSales => run_case::<CarSales>(config, started),
        CaseName::CatRank => run_case::<CatRank>(config, started),
        CaseName::Eval => run_case::<Eval>(config, started),
    }
}

fn run_case<C: Case>(config: &Config, started: Instant) -> Result<Outcome, Failure> {
    match config.reuse {
        Reuse::NoReuse => run_with::<C, _>(config, started, Fresh, Fresh),
        Reuse::Reuse => {
            // Word-aligned, as the crate requires of scratch space (and checks). Only object
            // and bytes hold two builders at once; the other modes leave the second one empty
            // rather than zero a megabyte they never use.
            let second_words = match config.mode {
                Mode::Object | Mode::Bytes => SCRATCH_WORDS,
                Mode::Client | Mode::Server | Mode::Pipe => 0,
            };
            let mut first = capnp::Word::allocate_zeroed_vec(SCRATCH_WORDS);
            let mut second = capnp::Word::allocate_zeroed_vec(second_words);
            run_with::<C, _>(
                config,
                started,
                Scratch::new(&mut first),
                Scratch::new(&mut second),
            )
        }
    }
}

/// Runs the mode with its builders: `first` makes the requests of object and bytes and every
/// message of the one-sided modes (a client's requests, a server's responses), `second` the
/// responses of object and bytes.
fn run_with<C: Case, A: Arena>(
    config: &Config,
    started: Instant,
    first: A,
    second: A,
) -> Result<Outcome, Failure> {
    let compression = config.compression;
    match config.mode {
        Mode::Object => object::<C, A>(config, started, first, second).map(Outcome::Report),
        Mode::Bytes => bytes::<C, A>(config, started, first, second).map(Outcome::Report),
        Mode::Client => {
            let (input, output) = standard_streams()?;
            let mut from_server = MessageReader::new(input, compression);
            let mut to_server = MessageWriter::new(output, compression);
            client::<C, A, _, _>(config, started, first, &mut from_server, &mut to_server)
                .map(Outcome::Report)
        }
        Mode::Server => {
            let (input, output) = standard_streams()?;
            let mut from_client = MessageReader::new(input, compression);
            let mut to_client = MessageWriter::new(output, compression);
            server::<C, A, _, _>(first, &mut from_client, &mut to_client).map(Outcome::Served)
        }
        Mode::Pipe => pipe::<C, A>(config, started, first).map(Outcome::Report),
    }
}

// ---- builders ---------------------------------------------------------------------------

/// Where a message builder's segments come from.
pub trait Arena {
    type Alloc<'a>: message::Allocator
    where
        Self: 'a;
    /// A builder for one message; the previous one must be gone.
    fn builder(&mut self) -> message::Builder<Self::Alloc<'_>>;
}

/// `no-reuse`: a fresh builder per message with the crate's default allocation.
pub struct Fresh;

impl Arena for Fresh {
    type Alloc<'a> = HeapAllocator;
    fn builder(&mut self) -> message::Builder<HeapAllocator> {
        message::Builder::new_default()
    }
}

/// `reuse`: every builder starts in the same scratch space, which the crate zeroes once
/// here and afterwards only where the previous message wrote (the crate's documented way of
/// reusing a `ScratchSpaceHeapAllocator`: lend it by `&mut`).
pub struct Scratch<'s> {
    allocator: ScratchSpaceHeapAllocator<'s>,
}

impl<'s> Scratch<'s> {
    pub fn new(words: &'s mut [capnp::Word]) -> Self {
        Scratch {
            allocator: ScratchSpaceHeapAllocator::new(capnp::Word::words_to_bytes_mut(words)),
        }
    }
}

impl<'s> Arena for Scratch<'s> {
    type Alloc<'a>
        = &'a mut ScratchSpaceHeapAllocator<'s>
    where
        Self: 'a;
    fn builder(&mut self) -> message::Builder<&mut ScratchSpaceHeapAllocator<'s>> {
        message::Builder::new(&mut self.allocator)
    }
}

// ---- timing -----------------------------------------------------------------------------

/// This process's CPU time (user + system, all threads), from the process CPU clock.
pub fn process_cpu_s() -> Result<f64, Failure> {
    use nix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map_err(|e| Failure(format!("cannot read the process CPU clock: {e}")))?;
    Ok(t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
}

/// CPU time (user + system) of the children this process has waited for: here the one
/// server of `pipe`, so the same figure as wait4's rusage of it.
fn waited_children_cpu_s() -> Result<f64, Failure> {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN)
        .map_err(|e| Failure(format!("cannot read the server's CPU time: {e}")))?;
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    Ok(seconds(usage.user_time()) + seconds(usage.system_time()))
}

/// Runs the warm-up, then the timed iterations, of `step` (which answers the bytes of its
/// request and response) and measures them. A failing step stops the run, named by its
/// iteration (counted from 1, warm-up included).
fn iterate(
    config: &Config,
    started: Instant,
    mut step: impl FnMut() -> Result<(u64, u64), Failure>,
) -> Result<Figures, Failure> {
    let warmup = config.warmup();
    let total = warmup + config.iterations;
    let at = |i: u64| format!("iteration {} of {total}", i + 1);

    let setup_s = started.elapsed().as_secs_f64();
    let warmup_started = Instant::now();
    for i in 0..warmup {
        step().map_err(|e| e.at(at(i)))?;
    }
    let warmup_s = warmup_started.elapsed().as_secs_f64();

    let cpu_started = process_cpu_s()?;
    let timed_started = Instant::now();
    let (mut request_bytes, mut response_bytes) = (0u64, 0u64);
    for i in warmup..total {
        let (request, response) = step().map_err(|e| e.at(at(i)))?;
        request_bytes += request;
        response_bytes += response;
    }
    let elapsed_s = timed_started.elapsed().as_secs_f64();
    let cpu_s = process_cpu_s()? - cpu_started;

    Ok(Figures {
        setup_s,
        warmup_s,
        elapsed_s,
        cpu_s,
        request_bytes,
        response_bytes,
        checked: total,
        server_cpu_s: None,
    })
}

// ---- the modes --------------------------------------------------------------------------

/// `object`: the request builder's reader goes straight to the server code, the response
/// builder's reader straight to the check; nothing is serialised.
fn object<C: Case, A: Arena>(
    config: &Config,
    started: Instant,
    mut requests: A,
    mut responses: A,
) -> Result<Figures, Failure> {
    let mut rng = FastRand::new();
    iterate(config, started, || {
        let mut request = requests.builder();
        let expected = C::build_request(&mut rng, request.init_root());
        let mut response = responses.builder();
        C::serve(request.get_root_as_reader()?, response.init_root())?;
        C::check(response.get_root_as_reader()?, expected)?;
        Ok((0, 0))
    })
}

/// `bytes`: each message serialised into its buffer (allocated once) and read back from it,
/// in place when not packed, through the crate's unpacking when packed.
fn bytes<C: Case, A: Arena>(
    config: &Config,
    started: Instant,
    mut requests: A,
    mut responses: A,
) -> Result<Figures, Failure> {
    let compression = config.compression;
    let mut rng = FastRand::new();
    let mut request_buffer = FlatBuffer::new(SCRATCH_WORDS);
    let mut response_buffer = FlatBuffer::new(SCRATCH_WORDS);
    iterate(config, started, || {
        let mut request = requests.builder();
        let expected = C::build_request(&mut rng, request.init_root());
        let request_len = request_buffer.write(&request, compression)?;
        drop(request);

        let mut response = responses.builder();
        serve_flat::<C, _>(request_buffer.bytes(), compression, &mut response)?;
        let response_len = response_buffer.write(&response, compression)?;
        drop(response);

        check_flat::<C>(response_buffer.bytes(), compression, expected)?;
        Ok((request_len as u64, response_len as u64))
    })
}

/// Serves the request held in `bytes` (serialised, packed or not) into `response`.
fn serve_flat<C: Case, A: message::Allocator>(
    mut bytes: &[u8],
    compression: Compression,
    response: &mut message::Builder<A>,
) -> Result<(), Failure> {
    match compression {
        Compression::None => {
            let message = serialize::read_message_from_flat_slice(&mut bytes, READER_OPTIONS)?;
            serve_message::<C, _, _>(&message, response)
        }
        Compression::Packed => {
            let message = serialize_packed::read_message(&mut bytes, READER_OPTIONS)?;
            serve_message::<C, _, _>(&message, response)
        }
    }
}

/// Checks the response held in `bytes` (serialised, packed or not).
fn check_flat<C: Case>(
    mut bytes: &[u8],
    compression: Compression,
    expected: C::Expected,
) -> Result<(), Failure> {
    match compression {
        Compression::None => {
            let message = serialize::read_message_from_flat_slice(&mut bytes, READER_OPTIONS)?;
            let root = message.get_root()?;
            C::check(root, expected)
        }
        Compression::Packed => {
            let message = serialize_packed::read_message(&mut bytes, READER_OPTIONS)?;
            let root = message.get_root()?;
            C::check(root, expected)
        }
    }
}

fn serve_message<C: Case, S: ReaderSegments, A: message::Allocator>(
    request: &message::Reader<S>,
    response: &mut message::Builder<A>,
) -> Result<(), Failure> {
    C::serve(request.get_root()?, response.init_root())
}

/// The client side of a pipe: each request written and flushed, then its response read and
/// checked before the next request is built.
fn client<C: Case, A: Arena, R: Read, W: std::io::Write>(
    config: &Config,
    started: Instant,
    mut requests: A,
    from_server: &mut MessageReader<R>,
    to_server: &mut MessageWriter<W>,
) -> Result<Figures, Failure> {
    let mut rng = FastRand::new();
    iterate(config, started, || {
        let mut request = requests.builder();
        let expected = C::build_request(&mut rng, request.init_root());
        let (sent, received) = (to_server.bytes(), from_server.bytes());
        to_server
            .send(&request)
            .map_err(|e| e.at("writing the request"))?;
        drop(request);
        let response = from_server
            .next_message()
            .map_err(|e| e.at("reading the response"))?
            .ok_or_else(|| Failure("the server's output ended before the response".into()))?;
        C::check(response.get_root()?, expected)?;
        Ok((to_server.bytes() - sent, from_server.bytes() - received))
    })
}

/// The server: answers each request as it comes until the input ends between two messages;
/// returns how many it answered. Public for the fuzz target, which runs it in memory.
pub fn server<C: Case, A: Arena, R: Read, W: std::io::Write>(
    mut responses: A,
    from_client: &mut MessageReader<R>,
    to_client: &mut MessageWriter<W>,
) -> Result<u64, Failure> {
    let mut served = 0u64;
    loop {
        let at = || format!("request {}", served + 1);
        let Some(request) = from_client.next_message().map_err(|e| e.at(at()))? else {
            return Ok(served);
        };
        let mut response = responses.builder();
        serve_message::<C, _, _>(&request, &mut response).map_err(|e| e.at(at()))?;
        to_client
            .send(&response)
            .map_err(|e| e.at(format!("writing the response to {}", at())))?;
        served += 1;
    }
}

/// `pipe`: this program started again as `server` with the same arguments, joined by two
/// pipes; the client side runs here. The server's end of input is its signal to stop; its
/// exit status and CPU time (rusage once it is waited for) complete the report.
fn pipe<C: Case, A: Arena>(
    config: &Config,
    started: Instant,
    requests: A,
) -> Result<Figures, Failure> {
    let program = std::env::current_exe()
        .map_err(|e| Failure(format!("cannot find this program to start its server: {e}")))?;
    let mut child = Command::new(&program)
        .args(config.argv(Mode::Server))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Failure(format!(
                "cannot start the server {}: {e}",
                program.display()
            ))
        })?;
    let (Some(to_child), Some(from_child), Some(mut child_err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(Failure("the server's pipes were not created".into()));
    };

    let compression = config.compression;
    let mut to_server = MessageWriter::new(to_child, compression);
    let mut from_server = MessageReader::new(from_child, compression);
    let result = client::<C, A, _, _>(config, started, requests, &mut from_server, &mut to_server);
    // Closing both pipes ends the server: at a message boundary after a whole run, or with
    // a broken pipe after a failure here.
    drop(to_server);
    drop(from_server);

    // Only one line comes (its count, or its error), so reading it all before waiting
    // cannot block the server.
    let mut said = Vec::new();
    let _ = child_err.read_to_end(&mut said);
    let status = child
        .wait()
        .map_err(|e| Failure(format!("cannot wait for the server: {e}")))?;
    let said = String::from_utf8_lossy(&said);
    let last_line = said.lines().last().unwrap_or("(nothing on stderr)");

    match result {
        Ok(_) if !status.success() => Err(Failure(format!(
            "the server exited with {status}: {last_line}"
        ))),
        Ok(mut figures) => {
            figures.server_cpu_s = Some(waited_children_cpu_s()?);
            Ok(figures)
        }
        Err(e) if !status.success() => {
            Err(e.at(format!("the server exited with {status} ({last_line})")))
        }
        Err(e) => Err(e),
    }
}

/// stdin and stdout as plain files (duplicated descriptors): read and written through this
/// program's own buffers only, never std's line-buffered stdout.
fn standard_streams() -> Result<(File, File), Failure> {
    let input = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| Failure(format!("cannot use stdin: {e}")))?;
    let output = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| Failure(format!("cannot use stdout: {e}")))?;
    Ok((File::from(input), File::from(output)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_version_in_the_report_is_the_locked_one() {
        let lock = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../../Cargo.lock");
        let lock = std::fs::read_to_string(lock).unwrap();
        let at = lock.find("name = \"capnp\"\nversion = \"").unwrap();
        let version = lock[at..].lines().nth(1).unwrap();
        let version = version
            .trim_start_matches("version = \"")
            .trim_end_matches('"');
        assert!(
            LIBRARY.ends_with(&format!(" {version}")),
            "{} vs Cargo.lock's {version}",
            LIBRARY
        );
    }

    /// A catrank request of `results` results, each a struct of the url pointer alone, all
    /// pointing at one text after the list (what the conformance case `amplified-response`
    /// sends): a word and the url's words to read per result, while its copy in the response
    /// is a whole SearchResult, the url and an empty snippet.
    fn shared_url_request(results: u32, url: &[u8]) -> Vec<u8> {
        let struct_ptr =
            |offset: u32, data: u64, ptrs: u64| u64::from(offset << 2) | data << 32 | ptrs << 48;
        let list_ptr = |offset: u32, size: u64, count: u64| {
            u64::from(offset << 2) | 1 | size << 32 | count << 35
        };
        let mut words = vec![
            struct_ptr(0, 0, 1),
            list_ptr(0, 7, u64::from(results)),
            struct_ptr(results, 0, 1),
        ];
        words.extend((0..results).map(|i| list_ptr(results - i - 1, 2, url.len() as u64 + 1)));
        let mut text = url.to_vec();
        text.resize(url.len() / 8 * 8 + 8, 0);
        let body_words = words.len() + text.len() / 8;
        let mut bytes = [0u32.to_le_bytes(), (body_words as u32).to_le_bytes()].concat();
        for word in words {
            bytes.extend(word.to_le_bytes());
        }
        bytes.extend(text);
        bytes
    }

    #[test]
    fn a_response_beyond_the_cap_is_refused_with_nothing_written() {
        // 700,000 results sharing a 10-word url: 7.7 Mi words read, 11.2 Mi of response (16 a
        // result, landing pads included), which no reader would accept.
        let url = [b"http://example.com/".as_slice(), &[b'u'; 54]].concat();
        let request = shared_url_request(700_000, &url);
        let mut from_client = MessageReader::new(request.as_slice(), Compression::None);
        let mut to_client = MessageWriter::new(Vec::new(), Compression::None);
        let e = server::<CatRank, _, _, _>(Fresh, &mut from_client, &mut to_client).unwrap_err();
        assert!(
            e.0.starts_with("writing the response to request 1: a message of ")
                && e.0.contains("beyond the 8388608-word cap"),
            "{e}"
        );
        assert_eq!(to_client.bytes(), 0);

        // Fewer results: answered, and the response reads back.
        let request = shared_url_request(1000, &url);
        let mut from_client = MessageReader::new(request.as_slice(), Compression::None);
        let mut to_client = MessageWriter::new(Vec::new(), Compression::None);
        assert_eq!(
            server::<CatRank, _, _, _>(Fresh, &mut from_client, &mut to_client).unwrap(),
            1
        );
        assert!(to_client.bytes() > 8 * 1000 * 13);
    }
}
