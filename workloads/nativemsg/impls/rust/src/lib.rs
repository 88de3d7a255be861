//! The `nativemsg-rust` host as a library: the binary (`main.rs`) runs `host::run` on the
//! process's stdin and stdout, and the fuzz target (`fuzz/`) runs `host::serve` in memory.
//!
//! - `framing`: the 4-byte length prefix, the caps and the EOF rules;
//! - `protocol`: one request body in, one reply body out (`ping`, `echo`, `fill`, errors);
//! - `host`: the read–answer–write loop and the exit status.

pub mod framing;
pub mod host;
pub mod protocol;

/// One `#[test]` per check named, each calling `<module>::<check>(respond)`: the body of
/// `serve_loop_tests!` and `protocol_tests!`.
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __tests_of_checks {
    ($parent:ident::$module:ident, $respond:expr; $($check:ident,)*) => {
        $(
            #[test]
            fn $check() {
                $crate::$parent::$module::$check($respond);
            }
        )*
    };
}
