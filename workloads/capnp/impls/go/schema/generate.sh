#!/bin/sh
# Generates the Go code of the workload's schemas (SPEC.md §2) into OUT (default: this folder),
# one package per schema: OUT/carsales, OUT/catrank, OUT/eval.
#
# The shared schemas carry no annotation of any one language's generator, but capnpc-go needs
# two (the Go package name and its import path), so they are added here to copies, right after
# each file's id. capnpc-go is built from the module version go.mod pins, so the generated code
# always matches the runtime it is compiled against. The code is checked in (Go's convention);
# `go generate ./workloads/capnp/impls/go/...` reruns this script and generate_test.go fails
# when the checked-in code differs from what it produces.
#
# Needs: go, and the capnp schema compiler on PATH.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
schemas="$here/../../../schema"
importbase=msgbench/workloads/capnp/impls/go/schema

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

cd "$here"
std="$(go list -m -f '{{.Dir}}' capnproto.org/go/capnp/v3)/std"
go build -o "$work/capnpc-go" capnproto.org/go/capnp/v3/capnpc-go

mkdir -p "$work/src"
for name in carsales catrank eval; do
    # The file id is the first line that starts with '@'; the annotations follow it.
    awk -v pkg="$name" -v imp="$importbase/$name" '
        { print }
        !done && /^@0x[0-9a-f]+;/ {
            print "using Go = import \"/go.capnp\";"
            print "$Go.package(\"" pkg "\");"
            print "$Go.import(\"" imp "\");"
            done = 1
        }
        END { if (!done) { print "generate.sh: no file id in " FILENAME > "/dev/stderr"; exit 1 } }
    ' "$schemas/$name.capnp" >"$work/src/$name.capnp"
    mkdir -p "$out/$name"
    capnp compile -I "$std" --src-prefix="$work/src" -o"$work/capnpc-go:$out/$name" \
        "$work/src/$name.capnp"
done
