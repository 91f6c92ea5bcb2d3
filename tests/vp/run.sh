#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The NVDLA virtual platform (docs/virtual-platform.md): the real kernel module,
# runtime and tools in a QEMU-booted Debian guest, the accelerator they drive
# the emulated NVDLA on the host (tools/nvdla_vp), behind three ivshmem-doorbell
# devices (nv_full, nv_small and nv_large).
#
#   tests/vp/run.sh test    make test-vp: the automated checks (result lines in the log)
#   tests/vp/run.sh shell   make vp: a shell in the guest with the module loaded
#   tests/vp/run.sh fuzz    make fuzz-vp: FUZZ_ITERATIONS random and mutated submits
#
#  1. Debian packages (as make test-kmd) and the kernel (KVER as make test-kmd's,
#     cached, shared with make test-kmd).
#  2. nvdla.ko against its headers (warnings are errors); the guest test program
#     (static); nvdla_vp and the static nvdla_runtime come from the Makefile
#     (NVDLA_VP, NVDLA_RUNTIME).
#  3. An initramfs with busybox, the modules, the two programs, and the regression
#     loadables with their golden md5s from SHARED_DIR (copied at test time, split
#     per configuration).
#  4. nvdla_vp starts QEMU (KVM when it works, else TCG; 2 vCPUs) with the three
#     devices and serves them; the guest's result lines go to the serial log, the
#     host model's report to nvdla_vp.log. The verdict needs both: TEST-VP-RESULT: PASS and a clean host.
#     A guest that dies before it loads nvdla.ko is booted once more (lib_boot).
#
# Environment: WORK (build/vp-test), KMD_CACHE (build/kmd-test/cache), NVDLA_VP,
# NVDLA_RUNTIME (the programs), SHARED_DIR (../shared), QEMU_TIMEOUT (seconds),
# FUZZ_ITERATIONS (test: 10000 over both devices; fuzz: 100000), FUZZ_SEED,
# JOB_TIMEOUT_MS (5000, the module's default), KVER, QEMU_ACCEL, GUEST_APPEND (kernel
# command-line words, e.g. failures injected: tests/kmd/lib.sh), VP_GUEST_SCRIPT (a shell script the guest runs instead
# of the checks, after loading the module; for debugging).
# Exit status: 0 pass (or skipped on purpose: SKIP_KERNEL_TESTS=1), 1 fail (also when QEMU
# cannot run).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
MODE=${1:-test}
WORK=${WORK:-$root/build/vp-test}
KMD_CACHE=${KMD_CACHE:-$root/build/kmd-test/cache}
NVDLA_VP=${NVDLA_VP:-$root/build/bin/nvdla_vp}
NVDLA_RUNTIME=${NVDLA_RUNTIME:-$root/build/vp-guest/bin/nvdla_runtime_static}
SHARED_DIR=${SHARED_DIR:-$(cd "$root/.." && pwd)/shared}
JOB_TIMEOUT_MS=${JOB_TIMEOUT_MS:-5000}
FUZZ_SEED=${FUZZ_SEED:-$(date +%s)}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
case $MODE in
test)
	QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
	FUZZ_ITERATIONS=${FUZZ_ITERATIONS:-10000}
	;;
fuzz)
	QEMU_TIMEOUT=${QEMU_TIMEOUT:-86400}
	FUZZ_ITERATIONS=${FUZZ_ITERATIONS:-100000}
	;;
shell)
	QEMU_TIMEOUT=${QEMU_TIMEOUT:-0}
	FUZZ_ITERATIONS=0
	;;
*)
	echo "usage: $0 test|shell|fuzz" >&2
	exit 2
	;;
esac

say() { printf 'test-vp: %s\n' "$*"; }
die() { printf 'test-vp: FAIL: %s\n' "$*" >&2; exit 1; }
# Not running is a failure unless SKIP_KERNEL_TESTS=1 asks for it: make test must not pass
# without the kernel tests by accident.
skip() {
	if [ "${SKIP_KERNEL_TESTS:-0}" = 1 ]; then
		printf 'test-vp: SKIP: %s\n' "$*"
		exit 0
	fi
	printf 'test-vp: FAIL: %s (SKIP_KERNEL_TESTS=1 skips the kernel tests on purpose)\n' "$*" >&2
	exit 1
}
[ "${SKIP_KERNEL_TESTS:-0}" != 1 ] || skip "SKIP_KERNEL_TESTS=1: not run"

start=$(date +%s)
# shellcheck source=tests/kmd/lib.sh
. "$root/tests/kmd/lib.sh"

# ---- 1. packages and kernel -------------------------------------------------------
lib_packages qemu-system-x86 busybox-static cpio kmod xz-utils zstd linux-headers-amd64 dwarves
lib_kernel "$KMD_CACHE"

# ---- 2. module, programs ------------------------------------------------------------
[ -x "$NVDLA_VP" ] || die "no host model at $NVDLA_VP (make vp-host)"
[ -x "$NVDLA_RUNTIME" ] || die "no static nvdla_runtime at $NVDLA_RUNTIME (make vp-guest)"
mkdir -p "$WORK"
say "building nvdla.ko for $KVER and the guest test program"
lib_build_module "$WORK/module" ""
ko=$WORK/module/kmd/nvdla.ko
# shellcheck disable=SC2046 # compiler flags, split on purpose
gcc -O2 -Wall -Wextra -Werror -static -I "$root/include/uapi/drm" -I "$root/include" \
	$(lib_uapi_flags) -o "$WORK/nvdla_vp_guest" "$here/nvdla_vp_guest.c" ||
	die "guest test program build failed"

# ---- 3. initramfs ---------------------------------------------------------------------
initrd=$WORK/initramfs
rm -rf "$initrd"
mkdir -p "$initrd"/{bin,dev,proc,sys,tmp,mod,vp}
cp /bin/busybox "$initrd/bin/busybox"
cp "$ko" "$initrd/mod/nvdla.ko"
lib_add_module_deps "$ko" "$initrd/mod"
echo "$lib_module_order" >"$initrd/mod/order"
strip -o "$initrd/bin/nvdla_runtime" "$NVDLA_RUNTIME"
strip -o "$initrd/bin/nvdla_vp_guest" "$WORK/nvdla_vp_guest"

# The regression loadables and their golden md5s, one directory per configuration
# (the *_small loadables are nv_small's): /vp/vectors/CONFIG/{flatbufs,golden}.
regression=$SHARED_DIR/vectors/sw-regression
nvectors=0
if [ -d "$regression/flatbufs" ]; then
	while IFS= read -r f; do
		name=$(basename "$f")
		name=${name%_fbuf}
		case $name in *_small) cfg=nv_small ;; *) cfg=nv_full ;; esac
		mkdir -p "$initrd/vp/vectors/$cfg/flatbufs" "$initrd/vp/vectors/$cfg/golden"
		cp "$f" "$initrd/vp/vectors/$cfg/flatbufs/"
		for g in "$regression/golden/${name}"_*; do
			base=$(basename "$g")
			# NAME_<hex digits> only: CONV_D_L0_0_small_3c77f6 is not CONV_D_L0_0's.
			if ! [[ ${base#"${name}_"} =~ ^[0-9a-f]+$ ]] || [ ! -f "$g/lead.md5" ]; then
				continue
			fi
			mkdir -p "$initrd/vp/vectors/$cfg/golden/$base"
			cp "$g/lead.md5" "$initrd/vp/vectors/$cfg/golden/$base/"
		done
		nvectors=$((nvectors + 1))
	done < <(find "$regression/flatbufs" -name '*_fbuf' -type f | sort)
fi
[ "$nvectors" -gt 0 ] ||
	say "no regression loadables in $regression (SHARED_DIR=...): the checks that run them are skipped"

cat >"$initrd/vp/settings" <<EOF
MODE=$MODE
JOB_TIMEOUT_MS=$JOB_TIMEOUT_MS
FUZZ_ITERATIONS=$FUZZ_ITERATIONS
FUZZ_SEED=$FUZZ_SEED
EOF
[ -z "${VP_GUEST_SCRIPT:-}" ] || cp "$VP_GUEST_SCRIPT" "$initrd/vp/script.sh"
# The original runtime's ioctl sequence with the original compiler's loadables.
# shellcheck source=tests/vp/orig-runtime.sh
. "$here/orig-runtime.sh"
orig_stage "$initrd" "$SHARED_DIR" "${NVDLA_VP_ORIG:-$(dirname "$NVDLA_RUNTIME")/nvdla_vp_orig_static}"
cp "$here/model-hang.sh" "$initrd/vp/"
cp "$here/guest-init.sh" "$initrd/init"
chmod +x "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet) >"$WORK/initramfs.cpio"

# ---- 4. QEMU behind the host model ---------------------------------------------------
log=$WORK/serial.log
vplog=$WORK/nvdla_vp.log
stats=$WORK/nvdla_vp-stats.json
rm -f "$log" "$vplog" "$stats"
append="console=ttyS0 quiet no_timer_check log_buf_len=8M panic=-1 oops=panic panic_on_warn=1 $LIB_MEMORY_DEBUG $LIB_GUEST_APPEND"
lib_qemu_accel
qemu=(qemu-system-x86_64 "${lib_qemu_accel[@]}" -machine pc -smp 2 -m 512M
	-display none -vga none -nic none -no-reboot
	-kernel "$cache/vmlinux" -initrd "$WORK/initramfs.cpio" -append "$append")
vp=("$NVDLA_VP" --instance nv_full:64M --instance nv_small:64M --instance nv_large:64M
	--test-hooks --stats "$stats"
	--socket-dir "$WORK/sockets")

if [ "$MODE" = shell ]; then
	say "booting the virtual platform: a shell in the guest (exit or Ctrl-A X leaves; host log: $vplog)"
	set +e
	# shellcheck disable=SC2086 # VP_FLAGS: options, split on purpose
	"${vp[@]}" -v ${VP_FLAGS:-} -- "${qemu[@]}" -monitor none -serial mon:stdio 2>"$vplog"
	set -e
	cat "$vplog"
	exit 0
fi

boot() {
	rm -f "$log" "$vplog" "$stats"
	say "booting $KVER under QEMU (${lib_qemu_accel[1]}, 2 vCPUs) behind nvdla_vp: nv_full, nv_small and nv_large on ivshmem-doorbell"
	qstart=$(date +%s)
	set +e
	# shellcheck disable=SC2086 # VP_FLAGS: options, split on purpose
	timeout "$QEMU_TIMEOUT" "${vp[@]}" ${VP_FLAGS:-} -- "${qemu[@]}" -monitor none -serial "file:$log" \
		>"$WORK/qemu.log" 2>"$vplog"
	qrc=$?
	set -e
	qsecs=$(($(date +%s) - qstart))
}
lib_boot "$log" boot "$vplog" "$stats" "$WORK/qemu.log"

if [ ! -s "$log" ]; then
	cat "$WORK/qemu.log" "$vplog"
	[ $qrc = 124 ] && die "QEMU produced no output in ${QEMU_TIMEOUT}s"
	skip "QEMU cannot run here (exit $qrc, see $WORK/qemu.log)"
fi

grep -aE '^(ok  |FAIL|SKIP|info) |^nvdla-vp-guest|guest:|^fuzz |^faults |^churn |^ioctls:|^bench|TEST-VP-RESULT' "$log" || true
if grep -qaE 'Kernel panic|BUG:|WARNING:|Oops' "$log"; then
	echo "---- kernel log excerpt ----"
	grep -an -B5 -A40 -m1 -E 'Kernel panic|BUG:|WARNING:|Oops' "$log" | head -80
fi
echo "---- host model (nvdla_vp) ----"
grep -E '^nvdla_vp|^NVDLA-VP' "$vplog" || cat "$vplog"
pass=$(grep -caE '^ok  ' "$log" || true)
fails=$(grep -caE '^FAIL' "$log" || true)
skips=$(grep -caE '^SKIP ' "$log" || true)
say "QEMU ran ${qsecs}s, total $(($(date +%s) - start))s; serial log: $log; host log: $vplog"
ok=yes
grep -qa 'TEST-VP-RESULT: PASS' "$log" || ok=no
if ! grep -q 'NVDLA-VP-HOST: clean' "$vplog"; then
	say "the host model reports accesses outside the carve-out, refused entries or protocol errors"
	ok=no
fi
if [ $ok != yes ]; then
	[ $qrc = 124 ] && say "QEMU timed out after ${QEMU_TIMEOUT}s"
	echo "test-vp: $pass passed, $((fails > 0 ? fails : 1)) failed, $skips skipped, boots retried: $lib_boot_retries"
	exit 1
fi
echo "test-vp: $pass passed, $fails failed, $skips skipped, boots retried: $lib_boot_retries; host model clean"
