# hilrig: `make run` sets everything up and runs the Robot suite on the simulator rig;
# `make test` sets everything up and runs every test. Both work on a fresh Debian
# bookworm machine as root (they install what is missing, `apt-get update` first).

SHELL := /bin/bash
PYTHON_SYS := /usr/bin/python3
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
RIG ?= rigs/sim.yaml
ROBOT_OUT ?= results/robot

APT_PACKAGES := build-essential cmake ninja-build git python3-venv python3-dev \
	pybind11-dev nlohmann-json3-dev libgtest-dev iperf3 procps

.PHONY: all deps venv build run test test-native test-python test-robot nightly validate clean

all: build

# System packages: installed only when one is missing, so a second run is fast.
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing system packages:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "error: need root to install:" $$missing >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update && apt-get install -y --no-install-recommends $$missing </dev/null; \
	fi

$(VENV)/.installed: pyproject.toml | deps
	$(PYTHON_SYS) -m venv --system-site-packages $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

build: deps venv
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PYTHON_SYS) >/dev/null
	cmake --build $(BUILD) -j2

run: build
	@mkdir -p $(ROBOT_OUT)
	HILRIG_RIG=$(RIG) $(VENV)/bin/robot --outputdir $(ROBOT_OUT) testcases/ ; rc=$$?; \
	echo; echo "Robot log:    $(ROBOT_OUT)/log.html"; \
	echo "Robot report: $(ROBOT_OUT)/report.html"; \
	echo "Results:      results/outbox/ (line protocol), results/evidence/ (JSON per run)"; \
	exit $$rc

validate: venv
	$(VENV)/bin/hilrig validate testcases/

test: build test-native test-python test-robot

test-native:
	cd $(BUILD) && ctest --output-on-failure

test-python:
	$(PY) -m pytest -q hostlib/tests

test-robot:
	@mkdir -p results/robot-ci
	HILRIG_RIG=rigs/sim.yaml $(VENV)/bin/robot --outputdir results/robot-ci testcases/

nightly: build
	@mkdir -p results/nightly
	HILRIG_RIG=$(RIG) $(VENV)/bin/robot --outputdir results/nightly testcases/

clean:
	rm -rf $(BUILD) hostlib/_native*.so
