# The two commands of the README:
#   make demo   sets everything up, builds, and runs the demo on built-in data
#   make test   sets everything up, builds, and runs the whole test suite
# Options go to CMake through CMAKE_ARGS, e.g. make test CMAKE_ARGS=-DFLCC_WITH_CUDA=OFF

BUILD ?= build
CMAKE_ARGS ?=
JOBS ?= $(shell nproc)

.PHONY: setup build demo test clean

setup:
	scripts/setup.sh

build: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	mkdir -p out
	$(BUILD)/examples/flcc-demo out

# The test suite, the Python package built by pip into a venv with its tests, then the
# benchmark harness in quick mode (so that it cannot rot; it checks the peers' outputs against
# FLCC's and judges no speed).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	scripts/python-test.sh
	FLCC_BENCH=$(BUILD)/bench/flcc-bench bench/run_cpu.sh --quick

clean:
	rm -rf $(BUILD) out
