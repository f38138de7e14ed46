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
	pybind11-dev nlohmann-json3-dev libgtest-dev iperf3 procps influxdb \
	libuhd-dev uhd-host python3-uhd libsoapysdr-dev soapysdr-tools python3-soapysdr gnuradio gnuradio-dev \
	pkg-config libusb-1.0-0-dev umockdev libumockdev-dev gir1.2-umockdev-1.0 chromium python3-matplotlib \
	verilator iverilog yosys nextpnr-ice40 fpga-icestorm ccache
# make bench: SoapyRemote serving driver=hilrig (a private dbus-daemon lets SoapySDRServer run
# without avahi; hostlib/bench/soapyremote.py), its client checks samples with numpy.
APT_PACKAGES += soapyremote-server soapysdr-module-remote dbus-daemon python3-numpy
# make bench (hilrig-bench spsc): Boost.Lockfree's spsc_queue, the ring's outside peer.
APT_PACKAGES += libboost-dev
# The RF analyzer's transforms (hostlib/native/rf): FFTW3, found with pkg-config.
APT_PACKAGES += libfftw3-dev
# ctest isa.*: the RF stream's AVX2 and baseline copies run under qemu-user's CPU models.
APT_PACKAGES += qemu-user
# Lab places whose cases run on their rig host over ssh (docs/scale-out.md); the tests run
# a real sshd on 127.0.0.1 as that rig host.
APT_PACKAGES += openssh-server openssh-client
# Cases with `link:` (docs/long-link.md): namespaces, TUN addresses and tc via iproute2's ip/tc.
APT_PACKAGES += iproute2
# make bench, group link: iperf 2 (microsecond pacing) beside iperf3 across the emulated link,
# tcpdump timing each paced sender's datagrams on the link's TUN device.
APT_PACKAGES += iperf tcpdump

.PHONY: all deps venv influxdb build gr-blocks test-gr-blocks bench run study test test-native test-python test-robot test-firmware nightly trend-bench validate clean reference-usb

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
	$(PY) -m pip install --quiet -e '.[test,firmware,lab]'
	touch $@

venv: $(VENV)/.installed

# InfluxDB 1.8.10 (v1 + v2 compat API, Flux) for the result-shipping tests, built from
# source once with Go; Debian's `influxdb` package (1.6.7, v1 API only) comes from apt.
# The apt unit is never started by us: the tests start their own servers on free ports.
INFLUXD_18 := $(BUILD)/influxdb-1.8.10/influxd
GO := $(shell command -v go 2>/dev/null || { test -x /usr/local/go/bin/go && echo /usr/local/go/bin/go; })

# A fresh machine has no Go: Debian's golang-go is installed then (make test must work there).
$(INFLUXD_18):
	@go="$(GO)"; \
	if [ -z "$$go" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "error: Go is needed to build InfluxDB 1.8.10; install golang-go (need root)" >&2; exit 1; fi; \
		echo "installing golang-go (Go builds InfluxDB 1.8.10 for the result-shipping tests)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update && apt-get install -y --no-install-recommends golang-go </dev/null || exit 1; \
		go=/usr/bin/go; \
	fi; \
	echo "building InfluxDB 1.8.10 with $$go"; \
	GOBIN=$(CURDIR)/$(BUILD)/influxdb-1.8.10 GOFLAGS=-p=2 $$go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10

influxdb: deps $(INFLUXD_18)
	@# apt starts the packaged server on a systemd host; the tests never use it.
	@if command -v systemctl >/dev/null 2>&1 && systemctl is-enabled influxdb >/dev/null 2>&1; then \
		systemctl disable --now influxdb || true; fi

# ccache (hostlib/native/CMakeLists.txt) keeps its cache in the tree, with paths taken
# relative to it; the core is compiled with the compiler Python's sysconfig names, as a
# `pip install .` (scikit-build-core) does, so that the wheel test's build reuses these
# objects (ccache hashes the compiler's name).
export CCACHE_DIR := $(CURDIR)/$(BUILD)/ccache
export CCACHE_BASEDIR := $(CURDIR)
SYSCONFIG_CXX = $$($(PYTHON_SYS) -c 'import sysconfig; print(sysconfig.get_config_var("CXX") or "c++")')

build: deps venv
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PYTHON_SYS) \
		-DCMAKE_CXX_COMPILER="$(SYSCONFIG_CXX)" >/dev/null
	cmake --build $(BUILD) -j2
	$(MAKE) --no-print-directory gr-blocks

# gr_blocks/ (GNU Radio module gr-hilrig) against the core's build tree (hilrig_DIR),
# installed into build/gr-prefix; a .pth makes the venv import it (`from gnuradio import
# hilrig`; the libraries find each other by RPATH) and GRC_BLOCKS_PATH in the venv's
# activate script lets GRC find its blocks (docs/gnuradio.md).
GR_BUILD := $(BUILD)/gr_blocks
GR_PREFIX := $(CURDIR)/$(BUILD)/gr-prefix
gr-blocks:
	cmake -S gr_blocks -B $(GR_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -Dhilrig_DIR=$(CURDIR)/$(BUILD) \
		-DCMAKE_INSTALL_PREFIX=$(GR_PREFIX) -DHILRIG_TEST_PYTHON=$(CURDIR)/$(PY) >/dev/null
	cmake --build $(GR_BUILD) -j2
	cmake --install $(GR_BUILD) >/dev/null
	cp $(GR_BUILD)/gr-hilrig.pth "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/"
	@grep -q GRC_BLOCKS_PATH $(VENV)/bin/activate || \
		echo 'export GRC_BLOCKS_PATH="$(GR_PREFIX)/share/gnuradio/grc/blocks$${GRC_BLOCKS_PATH:+:$$GRC_BLOCKS_PATH}"' >> $(VENV)/bin/activate

run: build
	@mkdir -p $(ROBOT_OUT)
	@# The run session prints the tally, the outbox and evidence files and `hilrig report: <html>`
	@# (written at the run's end), then Robot its output.xml, log.html and report.html: each path once.
	HILRIG_RIG=$(RIG) $(VENV)/bin/robot --outputdir $(ROBOT_OUT) --exclude study testcases/

# Transport benchmark: rig vs iperf3 / memcpy / Python mmap in one table
# (docs/performance.md). BENCH_LONG=1 for the issue's full 10 s windows.
bench: build
	$(PY) -m hostlib.bench

# Soak (not in make test): 10 minutes at 80 % of the simulator's zero-loss rate (2 s
# ladder, confirmed over 2 x 20 s) over UDP and shm; RSS and open fds must stay flat,
# loss 0; one table. `SOAK_S=60 make soak` is the short mode.
# The DSL fuzz tests at ten times make test's examples (HILRIG_FUZZ_SCALE).
.PHONY: fuzz
fuzz: venv
	HILRIG_FUZZ_SCALE=$${HILRIG_FUZZ_SCALE:-10} $(PY) -m pytest -q -p no:cacheprovider hostlib/tests/test_fuzz_yaml.py

.PHONY: soak
soak: build
	$(PY) -m hostlib.bench.soak

validate: venv
	$(VENV)/bin/hilrig validate testcases/

# testcases/hilrig.robot lists every YAML case, so that Robot's own --test/--include/
# --rerunfailed select them (docs/results.md "Robot Framework"); rewrite it after
# adding, renaming or retagging a case (a test fails while it is not current).
.PHONY: robot-suite
robot-suite: venv
	$(PY) -m hostlib.robot.suite testcases/

# The result-shipping tests need both InfluxDB servers; `make run` does not.
# The firmware tests (simulator builds, synthesis, place-and-route, the BMC: CPU work, no
# real time) run beside all the others at nice 19, so they take only the CPU the real-time
# tests leave idle (those hold on a busy host anyway). The firmware's output is printed at
# the end, whole; either side failing fails the target.
test: build influxdb
	@mkdir -p $(BUILD)
	@nice -n 19 $(MAKE) --no-print-directory test-firmware > $(BUILD)/test-firmware.log 2>&1 & firmware=$$!; \
	$(MAKE) --no-print-directory lint test-native test-python test-robot; rc=$$?; \
	wait $$firmware; firmware_rc=$$?; \
	echo "--- make test-firmware (ran beside the other tests; also in $(BUILD)/test-firmware.log)"; \
	cat $(BUILD)/test-firmware.log; \
	if [ $$rc != 0 ] || [ $$firmware_rc != 0 ]; then \
		echo "tests exit $$rc, firmware exit $$firmware_rc" >&2; exit 1; fi

# ruff + mypy (configured in pyproject.toml): zero findings on hostlib/ product code.
.PHONY: lint
lint: venv
	$(VENV)/bin/ruff check hostlib
	$(VENV)/bin/mypy
	@# a merge that left its conflict markers in any tracked file
	@! git grep -n -E '^(<<<<<<<|>>>>>>>) ' -- . || { echo "merge conflict markers above"; exit 1; }

test-native: test-gr-blocks
	cd $(BUILD) && ctest -j2 --output-on-failure --no-tests=error  # no gtests found is a failure

test-gr-blocks:
	cd $(GR_BUILD) && ctest --output-on-failure --no-tests=error  # gr-hilrig QA + GRC load test

# Two xdist workers, a test file each at a time (a file's module fixtures, such as its
# InfluxDB servers, start once); then the `serial` tests alone: they measure what the
# machine can carry (a rate search), which a second worker's load would change. Every
# test picks its own ports, rings and lock directory. Neither part may find no test
# (pytest exits 5).
PYTEST_WORKERS ?= 2
test-python:
	HILRIG_REQUIRE_DEVICES=1 $(PY) -m pytest -q -rs -n $(PYTEST_WORKERS) --dist loadfile --durations=15 -m "not serial" hostlib/tests
	HILRIG_REQUIRE_DEVICES=1 $(PY) -m pytest -q -rs -p no:xdist -m serial hostlib/tests

# RTL (firmware/): cocotb on Icarus and Verilator, Verilator lint, yosys iCE40 synthesis with
# cell budgets, nextpnr-ice40 place and route (fmax printed), the packetizer BMC (yosys-smtbmc, Yices 2 from PyPI).
# A testbench file per worker: each simulator run builds in its own directory.
test-firmware: venv
	$(PY) -m pytest -q -rs -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile --durations=10 firmware/tb firmware/tests
	@$(PY) firmware/synth/flow.py --summary

# The shipped suite on the simulator rig, less the UDP reference sweeps (benchmarks
# that measure and never fail on rate: make reference runs them) and the studies (make
# study); the published USB 2 configuration (tag usb-table) stays.
test-robot:
	@mkdir -p results/robot-ci
	HILRIG_RIG=rigs/sim.yaml $(VENV)/bin/robot --outputdir results/robot-ci --exclude referenceNOTusb-table --exclude study testcases/

# The studies (tag `study`, not in make test or make run): the lab's paced-UDP vs TCP study
# across emulated links, same host, LAN and WAN (testcases/reference/long_link_*.yaml,
# docs/long-link.md "The study"), each case's table beside its models and the lab's figures
# in the run report. Needs root (namespaces, TUN). 48 cases, ~8 min; STUDY_TAG narrows it
# (STUDY_TAG=studyANDwan, STUDY_TAG=studyANDscaled).
STUDY_TAG ?= study
.PHONY: study
study: build
	@mkdir -p results/study
	HILRIG_RIG=rigs/sim.yaml $(VENV)/bin/robot --outputdir results/study --include $(STUDY_TAG) testcases/

# The reference cases as they are: the UDP frame-size x channels x rate sweep, the
# unlimited-rate points and the published USB 2 configuration (docs/performance.md).
.PHONY: reference
reference: build
	@mkdir -p results/reference
	HILRIG_RIG=rigs/sim.yaml $(VENV)/bin/robot --outputdir results/reference --include reference testcases/

# The full published USB 2 table (testcases/reference/usb2_table.yaml: 4 KiB..128 KiB transfers x
# 32 KiB..2 MiB buffers x rx/tx/rx+tx, a rate search each; cases tagged `grid` run only when
# asked for, so `make test` runs the published configuration alone). ~7-10 min on the simulator.
reference-usb: build
	@mkdir -p results/reference-usb
	HILRIG_RIG=rigs/sim.yaml $(VENV)/bin/robot --outputdir results/reference-usb --variable TAG:usb-tableORgrid testcases/

# Nightly: the suite on a rig (devices required), shipped to InfluxDB by the suite itself,
# then the run's HTML report and the trend report over the last NIGHTS runs (InfluxDB, or
# the outbox history without a server). A regression flag fails the target (docs/reports.md).
NIGHTS ?= 30
nightly: build
	@mkdir -p results/nightly
	HILRIG_RIG=$(RIG) $(VENV)/bin/robot --outputdir results/nightly --variable REQUIRE_DEVICES:true testcases/ ; rc=$$?; \
	$(VENV)/bin/hilrig trends --rig $(RIG) --nights $(NIGHTS) || rc=1; \
	exit $$rc

# The nightly across rigs (docs/scale-out.md): the suite once per labgrid place, in parallel
# with pabot, results tagged by place in the one outbox/InfluxDB, one merged Robot output and
# one report for the night. PLACES="a b c" or PLACES_FILE=<one place a line>; the coordinator
# from LG_COORDINATOR (or COORDINATOR=host:port).
PLACES ?=
PLACES_FILE ?=
NIGHTLY_PROCESS_TIMEOUT ?= 14400
.PHONY: nightly-lab
nightly-lab: build
	@if [ -z "$(PLACES)$(PLACES_FILE)" ]; then echo 'error: give PLACES="a b" or PLACES_FILE=file' >&2; exit 2; fi
	$(VENV)/bin/hilrig lab nightly $(if $(PLACES),--places $(PLACES)) $(if $(PLACES_FILE),--places-file $(PLACES_FILE)) \
		$(if $(COORDINATOR),--coordinator $(COORDINATOR)) --rig $(RIG) --process-timeout $(NIGHTLY_PROCESS_TIMEOUT) \
		--outputdir results/nightly-lab testcases/

# The regression gate on seeded synthetic nights: detected / false alarms / nights to detect.
trend-bench: venv
	$(VENV)/bin/hilrig trends --benchmark

clean:
	rm -rf $(BUILD) hostlib/_native*.so hostlib/bin hostlib/rigs hostlib/soapy_modules
	rm -f "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))' 2>/dev/null)/gr-hilrig.pth"
