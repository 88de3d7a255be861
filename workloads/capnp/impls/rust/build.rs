//! Generates the Rust readers and builders of the workload's three schemas (SPEC §2) with
//! capnpc, which runs the `capnp` schema compiler (Debian's `capnproto`) and its own Rust code
//! generator. The schemas are used as they are: Rust's generator needs no annotation.

use std::path::Path;

const SCHEMA_DIR: &str = "../../schema";
const SCHEMAS: [&str; 3] = ["carsales.capnp", "catrank.capnp", "eval.capnp"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut command = capnpc::CompilerCommand::new();
    // The prefix makes the generated files `carsales_capnp.rs`, ... directly under OUT_DIR.
    command.src_prefix(SCHEMA_DIR);
    for schema in SCHEMAS {
        let path = Path::new(SCHEMA_DIR).join(schema);
        println!("cargo:rerun-if-changed={}", path.display());
        command.file(path);
    }
    command.run()?;
    Ok(())
}
