# The lab's entry points. Each target installs what is missing first (scripts/setup.sh is
# idempotent), so on a fresh clone `make test` and `make bench` are all the set-up there is.
.PHONY: setup setup-ray build test check-deep bench lint clean

setup:
	@scripts/setup.sh

# The optional cluster runner (docs/hosts.md): Ray, from requirements/ray-lock.txt. make test
# installs it, so that the two-node cluster test runs in CI.
setup-ray:
	@scripts/setup.sh --ray

build: setup
	./msgbench build

test: setup-ray build
	scripts/test.sh

# Every conformance suite against the sanitize build profile: the C and C++ implementations with
# ASan + UBSan, Go with -race, in build/sanitize/ (docs/decisions.md, "Sanitizer builds"). A
# sanitizer or race report fails the test during which it appeared. The release build (a
# prerequisite) provides the peers: Rust and Python programs, redis-server, the drivers.
check-deep: build
	./msgbench build --profile sanitize
	./msgbench verify --profile sanitize

bench: setup
	./msgbench bench --profile quick

lint: setup
	scripts/lint.sh

clean:
	rm -rf build
