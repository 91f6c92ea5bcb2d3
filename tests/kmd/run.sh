#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make test-kmd: the NVDLA kernel module tested for real in a Debian kernel
# (Debian 12's, or Debian 13's newest through a Debian 13 chroot), booted under
# QEMU (KVM when it works, else TCG) with no root filesystem.
#
#  1. Debian packages (qemu-system-x86 busybox-static cpio kmod xz-utils zstd
#     linux-headers-amd64 dwarves: pahole, for 6.12's module BTF), installed if missing.
#  2. The kernel: KVER, or the ABI linux-headers-amd64 depends on; its image
#     package(s) downloaded (not installed) and only vmlinuz and the DRM
#     modules extracted, cached in $WORK/cache (Debian 12) or
#     /var/cache/nvdla-kmd/kernels (Debian 13; tests/kmd/lib.sh).
#  3. nvdla.ko built against that kernel's headers twice, as shipped and
#     with the test engine (NVDLA_SELFTEST=y), warnings are errors; the
#     static test program.
#  4. An initramfs whose /init loads the modules (drm with debug=0x2, so that
#     the validator's reasons reach the log) and runs the test program
#     twice: with the production module (the DLA engine: the validator on
#     every submit; valid jobs meet no hardware and fail or time out) and
#     with the test build's selftest engine (jobs through the scheduler,
#     timeouts), unloading the module after each and checking the kernel log
#     for leaks and warnings.
#  5. QEMU with two ivshmem devices (two NVDLA instances: nv_full with a
#     carve-out, nv_small with DMA memory) and a third instance on the
#     platform bus (nv_large, tests/kmd/platdev), panic_on_warn=1 and the
#     memory debugging options of LIB_MEMORY_DEBUG.
#     The verdict is the result line in the serial log.
#
# Environment: WORK (default build/kmd-test), KVER (an ABI, a series such as 6.12: its
# newest Debian 12 kernel, or newest / 7.x: Debian 13's; default: from
# linux-headers-amd64), QEMU_TIMEOUT (seconds, default 240), QEMU_ACCEL (kvm, tcg),
# GUEST_APPEND (kernel command-line words, e.g. failures injected: tests/kmd/lib.sh).
# A guest that dies before it loads nvdla.ko is booted once more (lib_boot).
# Exit status: 0 pass (or skipped on purpose: SKIP_KERNEL_TESTS=1), 1 fail (also when QEMU
# cannot run).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=${WORK:-$root/build/kmd-test}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-240}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

say() { printf 'test-kmd: %s\n' "$*"; }
die() { printf 'test-kmd: FAIL: %s\n' "$*" >&2; exit 1; }
# Not running is a failure unless SKIP_KERNEL_TESTS=1 asks for it: make test must not pass
# without the kernel tests by accident.
skip() {
	if [ "${SKIP_KERNEL_TESTS:-0}" = 1 ]; then
		printf 'test-kmd: SKIP: %s\n' "$*"
		exit 0
	fi
	printf 'test-kmd: FAIL: %s (SKIP_KERNEL_TESTS=1 skips the kernel tests on purpose)\n' "$*" >&2
	exit 1
}
[ "${SKIP_KERNEL_TESTS:-0}" != 1 ] || skip "SKIP_KERNEL_TESTS=1: not run"

start=$(date +%s)

# shellcheck source=tests/kmd/lib.sh
. "$here/lib.sh"

# ---- 1. packages -------------------------------------------------------------
lib_packages qemu-system-x86 busybox-static cpio kmod xz-utils zstd linux-headers-amd64 dwarves

# ---- 2. the kernel -------------------------------------------------------------
lib_kernel "$WORK/cache"

# ---- 3. modules and test program --------------------------------------------------
# The production module (the dla phase runs it as shipped) and the test build
# with the selftest engine; both must build without a warning.
mkdir -p "$WORK"
say "building nvdla.ko for $KVER (production, and with the selftest engine)"
lib_build_module "$WORK/module" ""
lib_build_module "$WORK/module-selftest" y
# Board code for a platform-bus instance (the guest has no device tree).
rm -rf "$WORK/platdev"
cp -r "$here/platdev" "$WORK/platdev"
cp "$root/kmd/conftest.sh" "$WORK/platdev/"
if ! lib_kmake -C "$KDIR" M="$WORK/platdev" modules >"$WORK/platdev.log" 2>&1 ||
	grep -E 'warning:|error:' "$WORK/platdev.log"; then
	cat "$WORK/platdev.log"
	die "test platform-device module build failed"
fi
ko=$WORK/module/kmd/nvdla.ko
ko_selftest=$WORK/module-selftest/kmd/nvdla.ko

say "building the test program (static)"
# drm.h from the kernel's UAPI (Debian's linux-libc-dev has none): after the system headers.
# shellcheck disable=SC2046 # compiler flags, split on purpose
gcc -O2 -Wall -Wextra -Werror -static -I "$root/include/uapi/drm" -I "$root/include" \
	$(lib_uapi_flags) -o "$WORK/nvdla_kmd_test" "$here/nvdla_kmd_test.c" ||
	die "test program build failed"

# ---- 4. initramfs ------------------------------------------------------------------
initrd=$WORK/initramfs
rm -rf "$initrd"
mkdir -p "$initrd"/{bin,dev,proc,sys,mod}
cp /bin/busybox "$initrd/bin/busybox"
cp "$ko" "$initrd/mod/nvdla.ko"
cp "$ko_selftest" "$initrd/mod/nvdla-selftest.ko"
cp "$WORK/platdev/nvdla_test_platdev.ko" "$initrd/mod/"
cp "$WORK/nvdla_kmd_test" "$initrd/bin/"

# The modules nvdla.ko and vgem.ko need, dependencies first.
lib_add_module_deps "$ko" "$initrd/mod"
lib_add_module vgem "$initrd/mod"
echo "$lib_module_order" >"$initrd/mod/order"

cat >"$initrd/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "test-kmd guest: booted $(uname -r)"
fail=0
step() { # name command...
	name=$1
	shift
	if "$@"; then echo "ok   guest: $name"; else echo "FAIL guest: $name"; fail=$((fail + 1)); fi
}
for m in $(cat /mod/order); do
	args=""
	[ "$m" = drm ] && args="debug=0x2" # drm_dbg of the driver: the validator's reasons
	insmod /mod/$m.ko $args || echo "FAIL guest: insmod $m"
done
logged() { dmesg | grep -q "$1"; }
clean_log() { ! dmesg | grep -E "$1"; }
# LIB_MODULE_MARKER (tests/kmd/lib.sh): without this line, a failure is a boot's.
echo "test-kmd guest: loading nvdla.ko"
# GUEST_APPEND=NVDLA_INJECT=...: failures to test the harness with.
[ "${NVDLA_INJECT:-}" = fail ] && step "NVDLA_INJECT=fail: a check made to fail" false
step "insmod nvdla (production build, DLA engine)" insmod /mod/nvdla.ko job_timeout_ms=300
step "insmod nvdla_test_platdev (a platform-bus instance)" insmod /mod/nvdla_test_platdev.ko
[ "${NVDLA_INJECT:-}" = crash ] && echo c >/proc/sysrq-trigger
/bin/nvdla_kmd_test dla || fail=$((fail + 1))
step "dmesg: the engine is dla" logged "engine: dla"
step "dmesg: the validator's reason for a rejected job" logged "E_COUNT: the network has no operations"
step "dmesg: a 0.10 task detected by its layout" logged "job accepted in the 0.10/0.11 layout"
step "dmesg: the scattered vgem buffers refused for being in pieces" logged "import: 65536 bytes in [0-9]* pieces, not contiguous"
step "dmesg: why a valid job failed to start" logged "job failed to start: operation 0: SDP register group"
step "dmesg: the hung BDMA job timed out" logged "ran longer than 300 ms"
step "dmesg: nv_large's registers beyond its MMIO window" logged "outside the 4096-byte MMIO window"
dmesg | grep -m 3 -E "job rejected .*E_(EXTENT|VERSION|LIST)" | sed 's/^/log  guest: /'
step "rmmod nvdla" rmmod nvdla
step "no leaked buffers or jobs (dla)" clean_log "leaked|still alive"
step "no kernel warning (dla)" clean_log "WARNING:|BUG:|Oops|general protection"
dmesg -c >/dev/null
step "insmod nvdla (test build, selftest engine)" insmod /mod/nvdla-selftest.ko job_timeout_ms=300 selftest_engine=1
/bin/nvdla_kmd_test selftest || fail=$((fail + 1))
step "dmesg says: the hung job timed out" sh -c 'dmesg | grep -q "ran longer than 300 ms"'
step "rmmod nvdla" rmmod nvdla
step "unbind failed the job still running" sh -c 'dmesg | grep -q "device removed: the running job fails"'
step "rmmod nvdla_test_platdev" rmmod nvdla_test_platdev
step "no leaked buffers or jobs" sh -c '! dmesg | grep -E "leaked|still alive"'
step "no kernel warning" sh -c '! dmesg | grep -E "WARNING:|BUG:|Oops|general protection"'
# kmd-fix hooks (nvdla_kmd_test wedge): the platform instance without a reset line.
dmesg -c >/dev/null
step "insmod nvdla_test_platdev reset=0 (no reset line)" insmod /mod/nvdla_test_platdev.ko reset=0
step "insmod nvdla (test build) again" insmod /mod/nvdla-selftest.ko job_timeout_ms=5000 file_queue_mib=1 accel=1 selftest_engine=1
/bin/nvdla_kmd_test wedge || fail=$((fail + 1))
step "dmesg: the missing reset line is reported at probe" logged "no reset line (resets)"
step "dmesg: the device is wedged" logged "the device is wedged"
step "dmesg: the hung job's buffers stay allocated" logged "its 2 buffers stay allocated"
step "rmmod nvdla (wedged)" rmmod nvdla
step "rmmod nvdla_test_platdev (wedged)" rmmod nvdla_test_platdev
step "no leaked buffers or jobs (wedged)" clean_log "leaked|still alive"
step "no kernel warning (wedged)" clean_log "WARNING:|BUG:|Oops|general protection"
if [ "$fail" = 0 ]; then echo "TEST-KMD-RESULT: PASS"; else echo "TEST-KMD-RESULT: FAIL ($fail)"; fi
poweroff -f
EOF
chmod +x "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet) >"$WORK/initramfs.cpio"

# ---- 5. QEMU -----------------------------------------------------------------------
# Shared memory of each ivshmem device, with the header (include/nvdla/hw/nvdla_ivshmem.h) the
# host side writes: "NVDLA-VP", version 1, size 112, configuration, mailbox
# (none), memory (carve-out offset and size; 0: guest DMA memory).
le() { # value bytes -> printf escapes, little endian
	local v=$1 n=$2 i out=""
	for ((i = 0; i < n; i++)); do
		out+=$(printf '\\x%02x' $(((v >> (8 * i)) & 0xff)))
	done
	printf '%s' "$out"
}
make_shm() { # file size config memory_offset memory_size
	local hdr cfg
	rm -f "$1"
	truncate -s "$2" "$1"
	cfg=$(printf '%s' "$3" | od -An -tx1 | tr -d ' \n' | sed 's/../\\x&/g')
	hdr="NVDLA-VP$(le 1 4)$(le 112 4)$cfg"
	printf '%b' "$hdr" | dd of="$1" conv=notrunc status=none
	printf '%b' "$(le "$4" 8)$(le "$5" 8)" | dd of="$1" bs=1 seek=64 conv=notrunc status=none
}

log=$WORK/serial.log
lib_qemu_accel
boot() {
	rm -f "$log"
	make_shm "$WORK/shm-a" $((16 << 20)) nv_full $((64 << 10)) $(((16 << 20) - (64 << 10)))
	make_shm "$WORK/shm-b" $((1 << 20)) nv_small 0 0
	say "booting $KVER under QEMU (${lib_qemu_accel[1]}, 2 vCPUs): NVDLA on two ivshmem devices and the platform bus"
	qstart=$(date +%s)
	set +e
	timeout "$QEMU_TIMEOUT" qemu-system-x86_64 "${lib_qemu_accel[@]}" -machine pc -smp 2 -m 512M \
		-display none -vga none -nic none -no-reboot -monitor none -serial "file:$log" \
		-kernel "$cache/vmlinux" -initrd "$WORK/initramfs.cpio" \
		-append "console=ttyS0 quiet no_timer_check log_buf_len=8M panic=-1 oops=panic panic_on_warn=1 $LIB_MEMORY_DEBUG $LIB_GUEST_APPEND" \
		-object "memory-backend-file,id=shma,size=16M,mem-path=$WORK/shm-a,share=on" \
		-device ivshmem-plain,memdev=shma \
		-object "memory-backend-file,id=shmb,size=1M,mem-path=$WORK/shm-b,share=on" \
		-device ivshmem-plain,memdev=shmb -device pci-testdev \
		>"$WORK/qemu.log" 2>&1
	qrc=$?
	set -e
	qsecs=$(($(date +%s) - qstart))
}
lib_boot "$log" boot "$WORK/qemu.log"

if [ ! -s "$log" ]; then
	cat "$WORK/qemu.log"
	[ $qrc = 124 ] && die "QEMU produced no output in ${QEMU_TIMEOUT}s"
	skip "QEMU cannot run here (exit $qrc, see $WORK/qemu.log)"
fi

grep -E '^(ok  |FAIL|TODO|SKIP) |^nvdla-kmd-test|guest:|TEST-KMD-RESULT' "$log" || true
if grep -qE 'Kernel panic|BUG:|WARNING:|Oops' "$log"; then
	echo "---- kernel log excerpt ----"
	grep -n -B5 -A40 -m1 -E 'Kernel panic|BUG:|WARNING:|Oops' "$log" | head -80
fi
pass=$(grep -cE '^ok  ' "$log" || true)
fails=$(grep -cE '^FAIL' "$log" || true)
skips=$(grep -cE '^(TODO|SKIP) ' "$log" || true)
say "QEMU ran ${qsecs}s, total $(($(date +%s) - start))s; serial log: $log"
if ! grep -q 'TEST-KMD-RESULT: PASS' "$log"; then
	[ $qrc = 124 ] && say "QEMU timed out after ${QEMU_TIMEOUT}s"
	echo "test-kmd: $pass passed, $((fails > 0 ? fails : 1)) failed, $skips skipped, boots retried: $lib_boot_retries"
	exit 1
fi
echo "test-kmd: $pass passed, $fails failed, $skips skipped, boots retried: $lib_boot_retries"
