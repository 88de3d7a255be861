package main

// FuzzHost: the `host` fuzz target of the nativemsg workload (workloads/nativemsg/fuzz) on this
// program's own host (host.go): the checks are nmhosttest.FuzzHost's.
//
// Run: go test ./workloads/nativemsg/impls/go-go-json -run '^$' -fuzz '^FuzzHost$' -fuzztime 60s

import (
	"path/filepath"
	"testing"

	"msgbench/fuzz/go/fuzzseed"
	"msgbench/workloads/nativemsg/impls/go/nmhost/nmhosttest"
)

func FuzzHost(f *testing.F) {
	fuzzseed.AddCorpus(f, filepath.Join("..", "..", "fuzz", "corpus", "host"))
	nmhosttest.FuzzHost(f, host)
}
