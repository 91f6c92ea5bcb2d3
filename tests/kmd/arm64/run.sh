#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make test-kmd-arm64: the driver's device-tree paths in Debian 12's arm64 kernel, booted under
# QEMU's arm64 `virt` machine (TCG) with a device tree carrying reserved memory and NVDLA nodes.
# Debian's amd64 kernels have no CONFIG_OF and no CONFIG_DMA_DECLARE_COHERENT, so make
# test-kmd cannot reach these paths (docs/kernel-driver.md).
#
#  1. Debian packages: qemu-system-arm, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross,
#     device-tree-compiler, cpio, kmod.
#  2. The arm64 kernel: ARM64_KVER (default: the ABI Debian 12's linux-headers-arm64 depends
#     on, 6.1.0-*-arm64). Its packages come from an apt of its own in
#     $NVDLA_KMD_CACHE/arm64/apt (arm64 package lists; the host's dpkg and apt are left as
#     they are): linux-image-$ARM64_KVER (vmlinuz and the DRM modules kept),
#     linux-headers-$ARM64_KVER and its -common tree, unpacked, with the kbuild tools of the
#     host's linux-kbuild package of the same version (amd64 programs: they build for
#     ARCH=arm64 too), and busybox-static:arm64. All kept in $NVDLA_KMD_CACHE/arm64/$ARM64_KVER.
#  3. nvdla.ko cross-built twice (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-, warnings are
#     errors): as shipped, and the test build with the selftest engine (NVDLA_SELFTEST=y);
#     the static aarch64 test program (tests/kmd/arm64/nvdla_dt_test.c).
#  4. The device tree: QEMU's own for the machine (dumpdtb) plus
#     tests/kmd/arm64/nvdla-virt.dtsi (reserved memory: a no-map carve-out, a
#     reusable shared-dma-pool (CMA), register windows; seven NVDLA nodes, five with a bad
#     memory-region).
#  5. QEMU (TCG, 2 vCPUs) with slub_debug=FZPU page_poison=1 init_on_free=1
#     panic_on_warn=1; the guest's /init checks the probes' log lines, runs the test
#     program (allocation, import, unbind and rebind with live buffers) with the module as
#     shipped, then (unbind with a running job) with the test build, and scans the kernel
#     log after each. The verdict is the result line in the serial log.
#
# Environment: WORK (default build/kmd-arm64-test), ARM64_KVER (an ABI, or a series such as
# 6.12: its newest Debian 12 arm64 kernel, from bookworm-security), QEMU_TIMEOUT (seconds,
# default 300), NVDLA_KMD_CACHE (default /var/cache/nvdla-kmd). Exit status: 0 pass (or
# SKIP_KERNEL_TESTS=1), 1 fail.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
WORK=${WORK:-$root/build/kmd-arm64-test}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-300}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

say() { printf 'test-kmd-arm64: %s\n' "$*"; }
die() {
	printf 'test-kmd-arm64: FAIL: %s\n' "$*" >&2
	exit 1
}
skip() {
	if [ "${SKIP_KERNEL_TESTS:-0}" = 1 ]; then
		printf 'test-kmd-arm64: SKIP: %s\n' "$*"
		exit 0
	fi
	printf 'test-kmd-arm64: FAIL: %s (SKIP_KERNEL_TESTS=1 skips the kernel tests on purpose)\n' "$*" >&2
	exit 1
}
[ "${SKIP_KERNEL_TESTS:-0}" != 1 ] || skip "SKIP_KERNEL_TESTS=1: not run"

start=$(date +%s)

# shellcheck source=tests/kmd/lib.sh
. "$root/tests/kmd/lib.sh"

# ---- 1. packages -------------------------------------------------------------------
missing=""
for p in qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross device-tree-compiler \
	cpio kmod; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing$missing"
	# shellcheck disable=SC2086 # a list of package names
	{ $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $missing >/dev/null; } ||
		skip "cannot install$missing"
fi

# ---- 2. the arm64 kernel -----------------------------------------------------------
arm64_cache=$LIB_CACHE_DIR/arm64
apt_dir=$arm64_cache/apt
# apt with arm64 package lists of its own (Debian 12 and its security suite).
arm64_apt_options() {
	printf '%s\n' -o "Dir::State=$apt_dir/state" -o "Dir::State::status=$apt_dir/state/status" \
		-o "Dir::Cache=$apt_dir/cache" -o "Dir::Etc=$apt_dir/etc" \
		-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" \
		-o "Dir::Etc::SourceParts=$apt_dir/etc/sources.list.d" \
		-o "Dir::Etc::Parts=$apt_dir/etc/apt.conf.d" \
		-o "Dir::Etc::PreferencesParts=$apt_dir/etc/preferences.d" \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64
}
mapfile -t apt_options < <(arm64_apt_options)
arm64_apt_cache() { apt-cache "${apt_options[@]}" "$@"; }
arm64_apt_update() {
	if [ ! -f "$apt_dir/etc/sources.list" ]; then
		$SUDO mkdir -p "$apt_dir"/state/lists/partial "$apt_dir"/cache/archives/partial \
			"$apt_dir"/etc/sources.list.d "$apt_dir"/etc/apt.conf.d "$apt_dir"/etc/preferences.d
		$SUDO touch "$apt_dir/state/status"
		printf 'deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s\n' \
			"$LIB_MIRROR bookworm main" \
			"http://deb.debian.org/debian-security bookworm-security main" |
			$SUDO tee "$apt_dir/etc/sources.list" >/dev/null
	fi
	say "refreshing the arm64 package lists ($apt_dir)"
	$SUDO apt-get "${apt_options[@]}" update -qq || die "apt-get update (arm64 lists) failed"
	$SUDO touch "$apt_dir/.updated"
}
[ -n "$(find "$apt_dir/.updated" -mmin -1440 2>/dev/null)" ] || arm64_apt_update

case ${ARM64_KVER:-} in
"")
	ARM64_KVER=$(arm64_apt_cache depends linux-headers-arm64 |
		sed -n 's/.*Depends: linux-headers-\([0-9][^ ]*-arm64\).*/\1/p' | head -n1)
	[ -n "$ARM64_KVER" ] || die "cannot derive the arm64 kernel ABI from linux-headers-arm64"
	;;
*-arm64) ;;
[0-9]*.[0-9]*) # a series (6.12): its newest Debian 12 arm64 kernel
	series=$ARM64_KVER
	ARM64_KVER=$(arm64_apt_cache search --names-only \
		"^linux-headers-${series//./\\.}[.-][0-9].*-arm64\$" | cut -d' ' -f1 |
		grep -vE -- '-(rt|cloud)-arm64$' | sed 's/^linux-headers-//' | sort -V | tail -n1)
	[ -n "$ARM64_KVER" ] || die "no Debian 12 arm64 kernel of the $series series"
	;;
*) die "ARM64_KVER must be a series (6.12) or an ABI (6.1.0-56-arm64), not $ARM64_KVER" ;;
esac
KVER=$ARM64_KVER
cache=$arm64_cache/$KVER
kroot=$cache/root
hdrs=$cache/headers
KDIR=$hdrs/usr/src/linux-headers-$KVER
# shellcheck disable=SC2034 # lib.sh's (lib_uapi_flags)
LIB_HOST_KDIR=$KDIR

# Downloads packages into DIR, refreshing stale package lists once.
arm64_download() { # dir package...
	local dir=$1
	shift
	$SUDO mkdir -p "$dir"
	(cd "$dir" && $SUDO apt-get "${apt_options[@]}" download "$@" >/dev/null 2>&1) || {
		arm64_apt_update
		(cd "$dir" && $SUDO apt-get "${apt_options[@]}" download "$@" >/dev/null 2>&1)
	} || die "apt-get download $* (arm64) failed"
}

# (vgem: caches made before the import checks lack it)
if [ ! -f "$cache/.complete" ] || [ ! -d "$kroot/lib/modules/$KVER/kernel/drivers/gpu/drm/vgem" ]; then
	say "fetching linux-image-$KVER, linux-headers-$KVER (arm64) and busybox-static:arm64 into $cache"
	$SUDO rm -rf "$cache"
	$SUDO mkdir -p "$cache/debs" "$kroot" "$hdrs"
	version=$(arm64_apt_cache show "linux-headers-$KVER" | sed -n 's/^Version: //p' | head -n1)
	series=$(arm64_apt_cache depends "linux-headers-$KVER" |
		sed -n 's/.*Depends: \(linux-kbuild-[^ ]*\).*/\1/p' | head -n1)
	common=$(arm64_apt_cache depends "linux-headers-$KVER" |
		sed -n 's/.*Depends: \(linux-headers-[^ ]*-common\).*/\1/p' | head -n1)
	if [ -z "$version" ] || [ -z "$series" ] || [ -z "$common" ]; then
		die "no linux-headers-$KVER in the arm64 package lists"
	fi
	arm64_download "$cache/debs" "linux-image-$KVER" "linux-headers-$KVER" "$common" busybox-static
	# The kbuild tools run on this host: the amd64 package of the same version, or of the
	# same upstream version when the archive already carries a newer Debian revision of
	# linux-kbuild than of the arm64 headers (the security suite keeps only the newest).
	kbuild_version() { # the exact version if listed, else the newest of the same upstream
		apt-cache madison "$series" | awk -F' *[|] *' -v v="$version" -v u="${version%-*}-" \
			'$2 == v { e = $2 } index($2, u) == 1 && c == "" { c = $2 }
			END { print (e != "" ? e : c) }'
	}
	kbuild=$(kbuild_version)
	if [ -z "$kbuild" ]; then
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
		kbuild=$(kbuild_version)
	fi
	[ -n "$kbuild" ] || die "no amd64 $series of version ${version%-*} in this host's package lists"
	[ "$kbuild" = "$version" ] ||
		say "using the host's $series $kbuild with the arm64 headers $version (same upstream version)"
	(cd "$cache/debs" && $SUDO apt-get download "$series=$kbuild" >/dev/null 2>&1) ||
		die "apt-get download $series=$kbuild (amd64) failed"
	for deb in "$cache"/debs/linux-headers-*.deb "$cache"/debs/linux-kbuild-*.deb; do
		$SUDO dpkg-deb -x "$deb" "$hdrs"
	done
	# The arch tree's Makefile includes the common tree by its absolute path.
	$SUDO sed -i "s|^include /usr/src/|include $hdrs/usr/src/|" "$KDIR/Makefile"
	[ -f "$KDIR/Module.symvers" ] || die "no usable headers of $KVER in $hdrs"
	dpkg-deb --fsys-tarfile "$cache"/debs/linux-image-"$KVER"_*.deb | $SUDO tar -x -C "$kroot" \
		--wildcards "./boot/vmlinuz-$KVER" "./boot/config-$KVER" \
		"./lib/modules/$KVER/kernel/drivers/gpu/drm/drm.ko*" \
		"./lib/modules/$KVER/kernel/drivers/gpu/drm/drm_*.ko*" \
		"./lib/modules/$KVER/kernel/drivers/gpu/drm/scheduler/*" \
		"./lib/modules/$KVER/kernel/drivers/gpu/drm/vgem/*" \
		"./lib/modules/$KVER/modules.order" "./lib/modules/$KVER/modules.builtin" \
		"./lib/modules/$KVER/modules.builtin.modinfo" || die "unexpected linux-image-$KVER"
	$SUDO depmod -b "$kroot" "$KVER"
	dpkg-deb --fsys-tarfile "$cache"/debs/busybox-static_*.deb |
		$SUDO tar -x -O ./bin/busybox >"$cache/busybox.tmp"
	$SUDO mv "$cache/busybox.tmp" "$cache/busybox"
	$SUDO rm -rf "$cache/debs"
	$SUDO touch "$cache/.complete"
fi
config=$kroot/boot/config-$KVER
for option in CONFIG_OF CONFIG_OF_RESERVED_MEM CONFIG_DMA_DECLARE_COHERENT; do
	grep -q "^$option=y" "$config" || die "$KVER lacks $option: it cannot run these tests"
done

# ---- 3. module and test program ------------------------------------------------------
export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
mkdir -p "$WORK"
say "building nvdla.ko for $KVER (cross: ARCH=arm64, aarch64-linux-gnu-gcc)"
lib_build_module "$WORK/module" ""
lib_build_module "$WORK/module-selftest" y
ko=$WORK/module/kmd/nvdla.ko

say "building the test program (static, aarch64)"
# shellcheck disable=SC2046 # compiler flags, split on purpose
aarch64-linux-gnu-gcc -O2 -Wall -Wextra -Werror -static -I "$root/include/uapi/drm" \
	-I "$root/include" -I "$root/tests/kmd" $(lib_uapi_flags) -o "$WORK/nvdla_dt_test" \
	"$here/nvdla_dt_test.c" || die "test program build failed"

# ---- 4. initramfs and device tree ------------------------------------------------------
initrd=$WORK/initramfs
rm -rf "$initrd"
mkdir -p "$initrd"/{bin,dev,proc,sys,mod}
cp "$cache/busybox" "$initrd/bin/busybox"
chmod +x "$initrd/bin/busybox"
cp "$ko" "$initrd/mod/nvdla.ko"
cp "$WORK/module-selftest/kmd/nvdla.ko" "$initrd/mod/nvdla-selftest.ko"
cp "$WORK/nvdla_dt_test" "$initrd/bin/"
lib_module_order=""
lib_add_module_deps "$ko" "$initrd/mod"
lib_add_module vgem "$initrd/mod" # an importer of the instances' dma-bufs
echo "$lib_module_order" >"$initrd/mod/order"

# The regions of tests/kmd/arm64/nvdla-virt.dtsi.
cat >"$initrd/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "test-kmd-arm64 guest: booted $(uname -r)"
fail=0
step() { # name command...
	name=$1
	shift
	if "$@"; then echo "ok   guest: $name"; else echo "FAIL guest: $name"; fail=$((fail + 1)); fi
}
logged() { dmesg | grep -q "$1"; }
clean_log() { ! dmesg | grep -E "$1"; }
for m in $(cat /mod/order); do
	insmod /mod/$m.ko || echo "FAIL guest: insmod $m"
done
step "the kernel made the shared-dma-pool" logged "reserved mem: initialized node pool@5d000000"
echo "test-kmd-arm64 guest: loading nvdla.ko"
step "insmod nvdla" insmod /mod/nvdla.ko job_timeout_ms=300
step "nv_full probed with the no-map region as its carve-out" \
	logged "5e000000.nvdla.*NVDLA nv_full on platform: carve-out memory 16 MiB"
step "nv_small probed with the shared-dma-pool" logged "5e020000.nvdla.*NVDLA nv_small on platform: DMA memory"
step "the pool is the device's (of_reserved_mem_device_init)" \
	logged "5e020000.nvdla: assigned reserved memory node pool@5d000000"
step "the pool is CMA" logged "created CMA memory pool at 0x0*5d000000, size 16 MiB"
step "refused: a region beyond nv_small's 32 address bits" \
	logged "carve-out at device address 0x0*100000000 + 1048576 bytes is beyond the 32 address bits of nv_small"
step "refused: a region of part of a page" logged "carve-out 0x0*100200000 + 6144 bytes: not page aligned"
step "refused: a region neither no-map nor a pool" \
	logged "5e080000.nvdla: error -EINVAL: cannot use memory-region plain@5f000000"
step "refused: a memory-region outside reserved-memory" \
	logged "5e0a0000.nvdla: error -EINVAL: memory-region is not a reserved-memory node"
step "refused: a shared-dma-pool neither no-map nor reusable" \
	logged "5e0c0000.nvdla: error -EINVAL: memory-region mapped@5f200000: a shared-dma-pool without no-map must be reusable"
step "only the two good nodes (and vgem) have render nodes" sh -c '[ "$(ls /dev/dri | grep -c renderD)" = 3 ]'
dmesg | grep -E "nvdla|mem auto-init|kfence" | sed 's/^/log  guest: /'
nvdla_dt_test carveout 5e000000.nvdla 0x5c000000 0x1000000 || fail=$((fail + 1))
nvdla_dt_test pool 5e020000.nvdla 0x5d000000 0x1000000 || fail=$((fail + 1))
dmesg -c >/dev/null
nvdla_dt_test unbind 5e000000.nvdla 0x5c000000 0x1000000 || fail=$((fail + 1))
step "carve-out: the refused bind says why" logged "buffers of an earlier binding still use it"
nvdla_dt_test unbind 5e020000.nvdla 0x5d000000 0x1000000 || fail=$((fail + 1))
step "pool: the refused bind says why" logged "pool@5d000000.*buffers of an earlier binding still use it"
nvdla_dt_test pool 5e020000.nvdla 0x5d000000 0x1000000 || fail=$((fail + 1))
step "rmmod nvdla" rmmod nvdla
step "no leaked buffers or jobs" clean_log "leaked|still alive"
step "no kernel warning, bad page or poison" \
	clean_log "WARNING:|BUG:|Oops|Bad page|Poison|poison overwritten|Redzone|Unable to handle"
# Unbind with a job running: the test build, whose selftest engine's job hangs.
dmesg -c >/dev/null
step "insmod nvdla (test build, selftest engine)" \
	insmod /mod/nvdla-selftest.ko selftest_engine=1 job_timeout_ms=20000
nvdla_dt_test job 5e000000.nvdla 0x5c000000 0x1000000 || fail=$((fail + 1))
nvdla_dt_test job 5e020000.nvdla 0x5d000000 0x1000000 || fail=$((fail + 1))
for d in 5e000000 5e020000; do
	step "$d: unbind failed the running job" logged "$d.nvdla: \[drm\] device removed: the running job fails with ENODEV"
	step "$d: without a reset line its buffer stays until the old device goes" \
		logged "$d.nvdla: \[drm\] job 1 ended on the wedged device: its 1 buffers stay allocated"
done
step "rmmod nvdla (test build)" rmmod nvdla
step "no leaked buffers or jobs (jobs)" clean_log "leaked|still alive"
step "no kernel warning, bad page or poison (jobs)" \
	clean_log "WARNING:|BUG:|Oops|Bad page|Poison|poison overwritten|Redzone|Unable to handle"
if [ "$fail" = 0 ]; then echo "TEST-KMD-ARM64-RESULT: PASS"; else echo "TEST-KMD-ARM64-RESULT: FAIL ($fail)"; fi
poweroff -f
EOF
chmod +x "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet) >"$WORK/initramfs.cpio"

machine=(-machine virt -cpu max -smp 2 -m 512M)
qemu-system-aarch64 "${machine[@]}" -machine "dumpdtb=$WORK/virt.dtb" -display none \
	>"$WORK/dumpdtb.log" 2>&1 || { cat "$WORK/dumpdtb.log"; skip "qemu-system-aarch64 cannot run"; }
{
	dtc -q -I dtb -O dts "$WORK/virt.dtb"
	cat "$here/nvdla-virt.dtsi"
} >"$WORK/nvdla-virt.dts"
dtc -q -I dts -O dtb -o "$WORK/nvdla-virt.dtb" "$WORK/nvdla-virt.dts" ||
	die "dtc could not compile $WORK/nvdla-virt.dts"

# ---- 5. QEMU -----------------------------------------------------------------------
log=$WORK/serial.log
# shellcheck disable=SC2034 # lib.sh's (lib_boot): the line /init prints before insmod nvdla
LIB_MODULE_MARKER="test-kmd-arm64 guest: loading nvdla.ko"
boot() {
	rm -f "$log"
	say "booting $KVER under QEMU (arm64 virt, TCG, 2 vCPUs) with the NVDLA device tree"
	qstart=$(date +%s)
	set +e
	timeout "$QEMU_TIMEOUT" qemu-system-aarch64 "${machine[@]}" -accel tcg \
		-display none -nic none -no-reboot -monitor none -serial "file:$log" \
		-kernel "$kroot/boot/vmlinuz-$KVER" -initrd "$WORK/initramfs.cpio" \
		-dtb "$WORK/nvdla-virt.dtb" \
		-append "console=ttyAMA0 quiet log_buf_len=4M panic=-1 oops=panic panic_on_warn=1 $LIB_MEMORY_DEBUG" \
		>"$WORK/qemu.log" 2>&1
	qrc=$?
	set -e
	qsecs=$(($(date +%s) - qstart))
}
lib_boot "$log" boot "$WORK/qemu.log"
if [ ! -s "$log" ]; then
	cat "$WORK/qemu.log"
	[ "$qrc" = 124 ] && die "QEMU produced no output in ${QEMU_TIMEOUT}s"
	skip "QEMU cannot run here (exit $qrc, see $WORK/qemu.log)"
fi

grep -aE '^(ok  |FAIL|log  ) |guest:|TEST-KMD-ARM64-RESULT' "$log" || true
if grep -qaE 'Kernel panic|BUG:|WARNING:|Oops|Bad page' "$log"; then
	echo "---- kernel log excerpt ----"
	grep -an -B5 -A40 -m1 -E 'Kernel panic|BUG:|WARNING:|Oops|Bad page' "$log" | head -80
fi
pass=$(grep -caE '^ok  ' "$log" || true)
fails=$(grep -caE '^FAIL' "$log" || true)
say "QEMU ran ${qsecs}s, total $(($(date +%s) - start))s; serial log: $log"
if ! grep -qa 'TEST-KMD-ARM64-RESULT: PASS' "$log"; then
	[ "$qrc" = 124 ] && say "QEMU timed out after ${QEMU_TIMEOUT}s"
	echo "test-kmd-arm64: $pass passed, $((fails > 0 ? fails : 1)) failed, boots retried: $lib_boot_retries"
	exit 1
fi
echo "test-kmd-arm64: $pass passed, $fails failed, boots retried: $lib_boot_retries"
