//! The fuzz target's global allocator: the system allocator, plus what libFuzzer's sanitizer
//! hooks would give a C target, since a stable Rust build has no sanitizer runtime.
//!
//! - `-malloc_limit_mb` (default: `-rss_limit_mb`): libFuzzer installs its malloc/free hooks
//!   through `__sanitizer_install_malloc_and_free_hooks`, which a sanitizer runtime normally
//!   defines. This file defines it, and the allocator calls the malloc hook *before* each
//!   allocation, so one allocation above the limit is reported by libFuzzer itself
//!   ("ERROR: libFuzzer: out-of-memory (malloc(N))", an `oom-` artifact, exit status 71)
//!   even when its pages are never touched and the RSS stays small. libFuzzer installs the
//!   hooks only with `-detect_leaks=1` (its default). Only Rust allocations are seen (these
//!   programs allocate nothing through C).
//! - Leaks (there is no LeakSanitizer without a sanitizer runtime): the allocator counts live
//!   allocations; `check_no_leak` runs an input and, if it left allocations behind, runs it
//!   once more (a lazily initialised static allocates only once) and aborts, reporting
//!   "==PID== ERROR: fuzz target: leak: ...", if it leaks again.
//!
//! One file shared by every Rust fuzz crate of the lab, each including it as its `guard`
//! module (`#[path]`): it must be compiled into each fuzz binary itself (libFuzzer finds the hook
//! installer through a weak reference, which would not pull it out of a library).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

type MallocHook = extern "C" fn(*const u8, usize);
type FreeHook = extern "C" fn(*const u8);

static MALLOC_HOOK: AtomicUsize = AtomicUsize::new(0);
static FREE_HOOK: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Called by libFuzzer at start-up (the sanitizer runtimes' interface, same signature).
///
/// # Safety
/// Both pointers must be null or valid functions of the hook signatures; libFuzzer passes its
/// `MallocHook` and `FreeHook`.
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_install_malloc_and_free_hooks(
    malloc_hook: Option<MallocHook>,
    free_hook: Option<FreeHook>,
) -> i32 {
    MALLOC_HOOK.store(malloc_hook.map_or(0, |f| f as usize), Ordering::Relaxed);
    FREE_HOOK.store(free_hook.map_or(0, |f| f as usize), Ordering::Relaxed);
    1
}

fn before_malloc(size: usize) {
    let hook = MALLOC_HOOK.load(Ordering::Relaxed);
    if hook != 0 {
        // SAFETY: only ever set from a `MallocHook` above.
        let hook: MallocHook = unsafe { std::mem::transmute::<usize, MallocHook>(hook) };
        hook(std::ptr::null(), size);
    }
}

fn after_free(ptr: *mut u8) {
    let hook = FREE_HOOK.load(Ordering::Relaxed);
    if hook != 0 {
        // SAFETY: only ever set from a `FreeHook` above.
        let hook: FreeHook = unsafe { std::mem::transmute::<usize, FreeHook>(hook) };
        hook(ptr);
    }
}

pub struct Guard;

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        before_malloc(layout.size());
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE.fetch_add(1, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        before_malloc(layout.size());
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            LIVE.fetch_add(1, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(1, Ordering::Relaxed);
        after_free(ptr);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        before_malloc(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

/// Runs `run(data)`; aborts if it leaves allocations behind twice in a row.
pub fn check_no_leak(data: &[u8], run: impl Fn(&[u8])) {
    let before = LIVE.load(Ordering::Relaxed);
    run(data);
    if LIVE.load(Ordering::Relaxed) == before {
        return;
    }
    let before = LIVE.load(Ordering::Relaxed);
    run(data);
    let left = LIVE.load(Ordering::Relaxed) - before;
    if left != 0 {
        // libFuzzer's own report format, so a harness reading "==PID== ERROR: ..." sees it.
        eprintln!(
            "=={}== ERROR: fuzz target: leak: {left} allocation(s) still live after the input \
             (run twice)",
            std::process::id()
        );
        std::process::abort();
    }
}
