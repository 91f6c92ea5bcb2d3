# NVDLA software stack: the one entry point. `make help` lists the targets.
#
# Userspace (umd/, tools/, tests/) is built with CMake + Ninja in $(BUILD_DIR); the ASan+UBSan
# build of the same tree lives in $(SAN_DIR), the ThreadSanitizer build of its threaded tests in
# $(TSAN_DIR).

SHELL := /bin/bash
.DEFAULT_GOAL := build

BUILD_DIR  ?= build
SAN_DIR    ?= $(BUILD_DIR)/sanitize
TSAN_DIR   ?= $(BUILD_DIR)/tsan
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local
SHARED_DIR ?= $(abspath ../shared)
CMAKE_ARGS ?=
# Extra arguments for the benchmark program, e.g. BENCH_ARGS=--benchmark_min_time=1
BENCH_ARGS ?=
# ccache hits across checkouts in other directories (CI's clean clone): paths are hashed
# relative to the tree, and the build directory is left out of debug builds' hashes.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

# Debian 12 packages the build and the tests need.
DEB_PACKAGES := g++ cmake ninja-build ccache pkg-config libgtest-dev libgmock-dev \
                libbenchmark-dev libcli11-dev nlohmann-json3-dev zlib1g-dev clang-format \
                libflatbuffers-dev flatbuffers-compiler libdrm-dev libpng-dev libjpeg-dev \
                clang libclang-rt-14-dev libdnnl-dev \
                libonnx-dev libprotobuf-dev libonnx-testdata dataset-fashion-mnist \
                protobuf-compiler \
                dt-schema device-tree-compiler \
                linux-source
# The kernel tests (test-kmd, test-vp, test-dkms; debootstrap: the Debian 13 chroot of KVER=newest;
# dwarves: pahole, which the 6.12 headers run to add BTF to a module).
DEB_PACKAGES += qemu-system-x86 busybox-static cpio kmod xz-utils zstd linux-headers-amd64 dwarves \
                debootstrap dkms
# make test-kmd-arm64: QEMU's arm64 virt machine, the module and test program cross-built.
DEB_PACKAGES += qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross

CONFIGURE = cmake -S . -G Ninja -DNVDLA_SHARED_DIR=$(SHARED_DIR) $(CMAKE_ARGS)

.PHONY: help deps build test test-unit test-sanitize run run-lenet train-onnx regression train bench \
        install clean \
        format format-check

help:
	@echo "NVDLA software stack"
	@echo ""
	@echo "  make run            build, then run the main job on the user's flow: a residual CNN"
	@echo "                      trained in PyTorch on Fashion-MNIST (ONNX) compiled by nvdla_compiler"
	@echo "                      in int8 and fp16, all 10 000 test images on the default backend"
	@echo "                      (emulated NVDLA unless a device is present), accuracy next to the"
	@echo "                      float model, images/s (docs/main-job.md, docs/compiler.md)"
	@echo "  make run-lenet      the former main job: LeNet built with the C++ builder API"
	@echo "  make test           build, then run every test suite, plain and under ASan+UBSan, the"
	@echo "                      kernel module in QEMU-booted Debian kernels (test-kmd) and the"
	@echo "                      virtual platform (test-vp) on each of KMD_TEST_KERNELS (6.1 newest),"
	@echo "                      the device-tree paths in an arm64 guest (test-kmd-arm64), DKMS's"
	@echo "                      build (test-dkms) and the device-tree binding (dt-check)"
	@echo ""
	@echo "  make deps           install the Debian packages the build needs (apt-get; idempotent)"
	@echo "  make build          build the library, tools and tests into $(BUILD_DIR)/"
	@echo "  make test-unit      run the test suites of the plain build only"
	@echo "  make test-sanitize  build into $(SAN_DIR)/ with ASan+UBSan and run the suites there"
	@echo "  make test-tsan      build the emulator and runtime suites into $(TSAN_DIR)/ with"
	@echo "                      ThreadSanitizer and run their tests that use several threads at"
	@echo "                      every NVDLA_EMU_ISA level of this CPU; fails on any report"
	@echo "  make bench          run the benchmarks: format packing against memcpy, the emulated"
	@echo "                      convolution against oneDNN, whole ResNet-18/50 and MobileNetV2 on"
	@echo "                      the emulator against oneDNN, the runtime's overheads"
	@echo "                      and the main job's LeNet (images/s, per-layer profile)"
	@echo "  make regression     run the regression loadables of ../shared on the emulated NVDLA,"
	@echo "                      outputs checked against their goldens"
	@echo "  make train          retrain the main job's LeNet (a few minutes, one core) and rewrite"
	@echo "                      tools/lenet/lenet_fmnist.weights"
	@echo "  make train-onnx     retrain the main job's network with python3-torch and rewrite"
	@echo "                      tools/fmnist_resnet/fmnist_resnet.onnx (about 10 minutes, one core)"
	@echo "  make fuzz           build the libFuzzer targets with clang and run each FUZZ_SECONDS"
	@echo "  make mutants        compile each one-character bug of tests/mutants/mutants.txt into a"
	@echo "                      scratch copy, run the test binary that must notice it; fails if any"
	@echo "                      survives (slow: run before a release, not in CI)"
	@echo "  make kmd            build the kernel module (nvdla.ko) against KDIR"
	@echo "  make kmd-install    install it (modules_install) for KDIR's kernel"
	@echo "  make kmd-newest     build it against Debian's newest kernel (7.x) in a Debian 13 chroot"
	@echo "                      (/var/cache/nvdla-kmd/trixie, debootstrap; root)"
	@echo "  make dkms-install   install it with DKMS (rebuilt for new kernels); dkms-remove;"
	@echo "                      test-dkms: DKMS's build against each of KMD_TEST_KERNELS"
	@echo "  make test-kmd       boot a Debian kernel under QEMU with the module and test it; KVER:"
	@echo "                      6.1 (default: linux-headers-amd64's), 6.12 (bookworm-security),"
	@echo "                      newest (trixie-backports, 7.x, through the Debian 13 chroot), a"
	@echo "                      series (7.3) or an ABI; make test runs each of KMD_TEST_KERNELS"
	@echo "  make test-kmd-arm64 the device-tree paths (memory-region: no-map carve-out, CMA pool,"
	@echo "                      bad regions; unbind and rebind with live buffers) in Debian 12's"
	@echo "                      arm64 kernel on QEMU's virt machine (TCG, about 1 min; ARM64_KVER)"
	@echo "  make dt-check       validate the device-tree binding (docs/kmd/) and its example with"
	@echo "                      dt-schema, as the kernel's dt_binding_check does"
	@echo "  make vp             the virtual platform: a shell in a QEMU guest with nvdla.ko and"
	@echo "                      nvdla_runtime, the NVDLAs emulated on the host by nvdla_vp"
	@echo "  make test-vp        the virtual platform's checks: regression loadables through the"
	@echo "                      kernel, concurrency, fault path, rejection, fuzzing, ioctl count,"
	@echo "                      the original runtime's ioctls with the original compiler's loadables"
	@echo "                      (KVER as for test-kmd)"
	@echo "  make fuzz-vp        fuzz the kernel driver on the virtual platform, FUZZ_ITERATIONS"
	@echo "                      random and mutated submits (default 100000; FUZZ_SEED), then"
	@echo "                      cycles, graphs stalled midway, unbind/rebind under load (KVER)"
	@echo "  make install        install library, headers, pkg-config and CMake files to PREFIX"
	@echo "                      (PREFIX=$(PREFIX))"
	@echo "  make format         format the C++ sources with clang-format (.clang-format)"
	@echo "  make format-check   fail if any C++ source is not formatted or the kernel C (kmd/,"
	@echo "                      kmd/engine/) or the C guest tests have a checkpatch.pl --strict finding"
	@echo "  make clean          remove $(BUILD_DIR)/"
	@echo ""
	@echo "Variables: BUILD_DIR, JOBS (default: nproc), SHARED_DIR (test vectors and documents,"
	@echo "default ../shared), CMAKE_ARGS, BENCH_ARGS, FUZZ_SECONDS, PREFIX, KDIR (kernel build tree),"
	@echo "KVER and KMD_TEST_KERNELS (kernels of the QEMU tests), NVDLA_EMU_ISA=scalar|avx2|avx512|"
	@echo "avx512-novbmi and NVDLA_EMU_THREADS (the emulator's instruction set and threads)."
	@echo "SKIP_KERNEL_TESTS=1 skips test-kmd and test-vp on purpose (without it they fail when QEMU"
	@echo "cannot run)."


deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q ' installed$$' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends $$missing >/dev/null || \
	  { echo "deps: apt-get could not install:$$missing" >&2; exit 1; }; \
	fi

build: deps
	@[ -f $(BUILD_DIR)/build.ninja ] || $(CONFIGURE) -B $(BUILD_DIR) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: test-unit test-sanitize test-tsan test-kernels test-kmd-arm64 test-dkms dt-check

test-unit: build
	@echo "== tests (release build)"
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@[ -f $(SAN_DIR)/build.ninja ] || \
	  $(CONFIGURE) -B $(SAN_DIR) -DNVDLA_SANITIZE=ON -DNVDLA_BUILD_BENCHMARKS=OFF \
	    -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(SAN_DIR) -j $(JOBS)
	@echo "== tests (ASan+UBSan build)"
	@cd $(SAN_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# Only the two suites with threaded tests (tests/tsan/run.sh picks the tests), at -O1: quicker
# to build than -O2 and quick enough to run under ThreadSanitizer.
TSAN_FLAGS := -O1 -g

.PHONY: test-tsan

test-tsan: deps
	@[ -f $(TSAN_DIR)/build.ninja ] || \
	  $(CONFIGURE) -B $(TSAN_DIR) -DNVDLA_TSAN=ON -DNVDLA_BUILD_BENCHMARKS=OFF \
	    -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$(TSAN_FLAGS)" \
	    -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" >/dev/null
	@cmake --build $(TSAN_DIR) -j $(JOBS) --target nvdla_test_emu nvdla_test_runtime
	@tests/tsan/run.sh $(TSAN_DIR)

# The main job (docs/main-job.md) on the user's flow: the ONNX model of tools/fmnist_resnet
# (trained in PyTorch, `make train-onnx`) compiled by nvdla_compiler in int8 (calibrated on
# training images written as PGM files) and fp16, then every Fashion-MNIST test image classified
# on the default backend (NVDLA_BACKEND=auto: the emulated NVDLA unless a device is present).
FMNIST_MODEL = tools/fmnist_resnet/fmnist_resnet.onnx
FMNIST_DIR = $(BUILD_DIR)/fmnist

run: build
	@$(BUILD_DIR)/bin/nvdla_fmnist images --set train --count 500 --out $(FMNIST_DIR)/calibration
	@$(BUILD_DIR)/bin/nvdla_fmnist images --set test --out $(FMNIST_DIR)/test
	@for p in int8 fp16; do \
	  echo "== $(BUILD_DIR)/bin/nvdla_compiler $(FMNIST_MODEL) --precision $$p ..."; \
	  $(BUILD_DIR)/bin/nvdla_compiler $(FMNIST_MODEL) --config nv_full --precision $$p \
	    --calibration $(FMNIST_DIR)/calibration --normalize 255 \
	    --labels tools/fmnist_resnet/labels.txt -o $(BUILD_DIR)/fmnist_resnet_$$p.nvdla || exit 1; \
	done
	@echo "== classifying the 10 000 test images"
	@$(BUILD_DIR)/bin/nvdla_fmnist classify --model $(FMNIST_MODEL) --images $(FMNIST_DIR)/test \
	  --loadable int8=$(BUILD_DIR)/fmnist_resnet_int8.nvdla \
	  --loadable fp16=$(BUILD_DIR)/fmnist_resnet_fp16.nvdla

# The former main job: the LeNet of tools/lenet built with the C++ builder API in int8 and fp16.
run-lenet: build
	@$(BUILD_DIR)/bin/nvdla_mainjob --out-dir $(BUILD_DIR)

# Retrains the main job's network with Debian's python3-torch (deterministic: fixed seed and
# thread count) and rewrites the committed ONNX file. Not run by CI.
train-onnx:
	@/usr/bin/python3 -c "import torch, onnx" 2>/dev/null || \
	  { echo "train-onnx: needs python3-torch and python3-onnx (apt-get install python3-torch" \
	         "python3-onnx)" >&2; exit 1; }
	@/usr/bin/python3 tools/fmnist_resnet/train.py --output $(FMNIST_MODEL)

# Every regression loadable of ../shared run on the emulated NVDLA, each output compared with its
# golden md5. (The format walk-through is `$(BUILD_DIR)/bin/nvdla_surface demo`.)
REGRESSION_DIR = $(SHARED_DIR)/vectors/sw-regression

regression: build
	@if [ -d "$(REGRESSION_DIR)/flatbufs" ]; then \
	  echo "== regression loadables of $(REGRESSION_DIR) on the emulated NVDLA"; \
	  $(BUILD_DIR)/bin/nvdla_runtime --backend emu --regression $(REGRESSION_DIR); \
	else \
	  echo "regression: $(REGRESSION_DIR)/flatbufs is missing, so there is nothing to run: the"; \
	  echo "regression loadables and their goldens come with ../shared (SHARED_DIR=...)."; \
	fi

# Retrains the main job's network (deterministic: one thread, fixed seed) and rewrites its
# committed weights file. Not run by CI.
train: build
	@$(BUILD_DIR)/bin/nvdla_train_lenet --output tools/lenet/lenet_fmnist.weights

bench: build
	@for b in $(BUILD_DIR)/bin/nvdla_bench_*; do \
	  echo "== $$(basename $$b)"; $$b $(BENCH_ARGS) || exit 1; \
	done

install: build
	@cmake -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(BUILD_DIR) >/dev/null
	cmake --install $(BUILD_DIR)

CXX_SOURCES = $(shell git ls-files '*.cpp' '*.hpp' ':!kmd/')

format: deps
	@clang-format -i $(CXX_SOURCES)

# C++ against .clang-format; the kernel C (kmd/, kmd/engine/) and the C guest test programs with the
# kernel's checkpatch.pl --strict.
format-check: deps
	@clang-format --dry-run --Werror $(CXX_SOURCES)
	@CACHE=$(abspath $(BUILD_DIR))/kmd-test/cache/checkpatch tests/kmd/checkpatch.sh

clean:
	rm -rf $(BUILD_DIR)

# ---- Kernel module (kmd/, docs/kernel-driver.md) ----------------------------------------
# KDIR: the kernel build tree to build against (default: the running kernel's).
KDIR ?= /lib/modules/$(shell uname -r)/build

.PHONY: kmd kmd-install kmd-newest test-kmd test-kernels dkms-install dkms-remove test-dkms dt-check
.PHONY: test-kmd-arm64

kmd:
	@$(MAKE) --no-print-directory -C kmd KDIR=$(KDIR) OUT=$(abspath $(BUILD_DIR))/kmd
	@echo "kmd: $(abspath $(BUILD_DIR))/kmd/kmd/nvdla.ko"

kmd-install:
	$(MAKE) --no-print-directory -C kmd KDIR=$(KDIR) OUT=$(abspath $(BUILD_DIR))/kmd install

# KVER: the kernel test-kmd and test-vp boot and build against: an ABI
# (6.12.117+deb12-amd64, 7.3.4+deb13-amd64), a series (6.1, 6.12: its newest Debian 12
# kernel; 7.3: its newest Debian 13 kernel) or newest (trixie-backports' newest, built in
# the Debian 13 chroot); default: linux-headers-amd64's. Images and headers are downloaded
# once (Debian 12's: build/kmd-test/cache; Debian 13's: /var/cache/nvdla-kmd).
# make test runs both tests on each of KMD_TEST_KERNELS (CI adds 6.12: .ci/run).
KVER ?=
KMD_TEST_KERNELS ?= 6.1 newest

# checkpatch.pl --strict over kmd/, then KVER's kernel booted under QEMU with the module.
test-kmd:
	@CACHE=$(abspath $(BUILD_DIR))/kmd-test/cache/checkpatch tests/kmd/checkpatch.sh
	@WORK=$(abspath $(BUILD_DIR))/kmd-test $(if $(KVER),KVER=$(KVER)) tests/kmd/run.sh

test-kernels:
	@for k in $(KMD_TEST_KERNELS); do \
	  echo "== test-kmd, test-vp: kernel $$k"; \
	  $(MAKE) --no-print-directory test-kmd test-vp KVER=$$k || exit 1; \
	done

# The newest Debian kernel (trixie-backports) needs Debian 13's toolchain: built in a debootstrap
# chroot kept in /var/cache/nvdla-kmd/trixie (root); make test-kmd KVER=newest boots it.
kmd-newest:
	@WORK=$(abspath $(BUILD_DIR))/kmd-newest $(if $(KVER),KVER=$(KVER)) tests/kmd/newest.sh

# DKMS (docs/kernel-driver.md): install for KVER (default: the running kernel), DKMS rebuilds the
# module for each kernel installed later; test-dkms runs DKMS's build, in a private tree, against
# the headers of each of KMD_TEST_KERNELS.
dkms-install:
	@tests/kmd/dkms.sh install $(KVER)

dkms-remove:
	@tests/kmd/dkms.sh remove

test-dkms:
	@WORK=$(abspath $(BUILD_DIR))/dkms-test KMD_CACHE=$(abspath $(BUILD_DIR))/kmd-test/cache \
	  tests/kmd/dkms.sh test $(KMD_TEST_KERNELS)

# The device-tree paths in Debian 12's arm64 kernel (ARM64_KVER) on QEMU's virt machine: the
# amd64 kernels have no CONFIG_OF (docs/kernel-driver.md). Packages and kernel cached in
# /var/cache/nvdla-kmd/arm64.
test-kmd-arm64:
	@WORK=$(abspath $(BUILD_DIR))/kmd-arm64-test $(if $(ARM64_KVER),ARM64_KVER=$(ARM64_KVER)) \
	  tests/kmd/arm64/run.sh

# The binding against dt-schema's meta-schemas, its example against the binding, and broken
# nodes that must be refused.
dt-check: deps
	@tests/kmd/dt-check.sh

# ---- Fuzzing (tests/fuzz/README.md) -------------------------------------------------------
# libFuzzer targets built with clang, ASan and UBSan in their own tree, each run for
# FUZZ_SECONDS over its seed corpus; fails on any crash, leak, timeout or sanitizer report.
FUZZ_DIR     ?= $(BUILD_DIR)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=undefined
FUZZ_TARGETS := nvdla_fuzz_image nvdla_fuzz_dla_validate nvdla_fuzz_loadable nvdla_fuzz_seeds \
                nvdla_fuzz_cpu_task nvdla_fuzz_onnx nvdla_fuzz_caffe nvdla_fuzz_trace

.PHONY: fuzz

fuzz: deps
	@[ -f $(FUZZ_DIR)/build.ninja ] || \
	  CC=clang CXX=clang++ $(CONFIGURE) -B $(FUZZ_DIR) -DNVDLA_FUZZ=ON \
	    -DNVDLA_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=None \
	    -DCMAKE_C_FLAGS="$(FUZZ_FLAGS)" -DCMAKE_CXX_FLAGS="$(FUZZ_FLAGS)" \
	    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target $(FUZZ_TARGETS)
	@tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(SHARED_DIR)

# ---- Virtual platform (docs/virtual-platform.md) -----------------------------------------
# The host side (nvdla_vp, the main build) and the guest's static nvdla_runtime (its own tree:
# static archives, no oneDNN); tests/vp/run.sh boots the guest behind nvdla_vp. The kernel is
# cached with make test-kmd's.
VP_GUEST_DIR ?= $(BUILD_DIR)/vp-guest
FUZZ_ITERATIONS ?=
FUZZ_SEED ?=
VP_ENV = WORK=$(abspath $(BUILD_DIR))/vp-test KMD_CACHE=$(abspath $(BUILD_DIR))/kmd-test/cache \
  NVDLA_VP=$(abspath $(BUILD_DIR))/bin/nvdla_vp \
  NVDLA_RUNTIME=$(abspath $(VP_GUEST_DIR))/bin/nvdla_runtime_static SHARED_DIR=$(SHARED_DIR) \
  $(if $(KVER),KVER=$(KVER)) \
  $(if $(FUZZ_ITERATIONS),FUZZ_ITERATIONS=$(FUZZ_ITERATIONS)) $(if $(FUZZ_SEED),FUZZ_SEED=$(FUZZ_SEED))

.PHONY: vp vp-host vp-guest test-vp fuzz-vp

vp-host: deps
	@[ -f $(BUILD_DIR)/build.ninja ] || $(CONFIGURE) -B $(BUILD_DIR) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target nvdla_vp

vp-guest: deps
	@[ -f $(VP_GUEST_DIR)/build.ninja ] || \
	  $(CONFIGURE) -B $(VP_GUEST_DIR) -DNVDLA_STATIC_TOOL=ON -DNVDLA_WITH_DNNL=OFF \
	    -DNVDLA_BUILD_TESTS=OFF -DNVDLA_BUILD_BENCHMARKS=OFF \
	    -DCMAKE_PROJECT_INCLUDE=$(abspath tests/vp/static-guest.cmake) >/dev/null
	@cmake --build $(VP_GUEST_DIR) -j $(JOBS) --target nvdla_runtime_static nvdla_vp_orig_static

# About half a minute of QEMU once everything is built and the kernel is cached.
test-vp: vp-host vp-guest
	@$(VP_ENV) tests/vp/run.sh test

vp: vp-host vp-guest
	@$(VP_ENV) tests/vp/run.sh shell

fuzz-vp: vp-host vp-guest
	@$(VP_ENV) tests/vp/run.sh fuzz

# ---- Mutation testing (docs/development.md) -----------------------------------------------
# One-character bugs, each compiled into a scratch copy ($(BUILD_DIR)/mutants/tree) and checked
# by the test binary that must notice it. Slow (a rebuild per mutant); not run in CI.
.PHONY: mutants

mutants: deps
	@WORK=$(abspath $(BUILD_DIR))/mutants JOBS=$(JOBS) SHARED_DIR=$(SHARED_DIR) tests/mutants/run.sh
