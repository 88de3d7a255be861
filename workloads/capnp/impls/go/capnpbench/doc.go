// Package capnpbench is the Go implementation of the msgbench capnp workload
// (workloads/capnp/SPEC.md): Cap'n Proto's carsales, catrank and eval benchmarks on
// capnproto.org/go/capnp/v3, with the deterministic generator, the servers' computations,
// the clients' checks, the streams with the reader limits of SPEC §6, and the iteration loops
// of every mode. The command line and the report's JSON live in cmd/capnp-go.
//
// The schemas' Go code is generated (schema/generate.sh) and checked in.
package capnpbench

//go:generate sh ../schema/generate.sh
