# The lab's entry points. Each target installs what is missing first (scripts/setup.sh is
# idempotent), so on a fresh clone `make test` and `make bench` are all the set-up there is.
.PHONY: setup build test bench lint clean

setup:
	@scripts/setup.sh

build: setup
	./msgbench build

test: build
	scripts/test.sh

bench: setup
	./msgbench bench --profile quick

lint: setup
	scripts/lint.sh

clean:
	rm -rf build
