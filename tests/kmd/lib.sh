# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# Shell helpers shared by the QEMU tests of the kernel module: tests/kmd/run.sh
# (make test-kmd) and tests/vp/run.sh (make test-vp, make vp, make fuzz-vp).
# Sourced, not run. The caller defines say, die and skip (each prints its
# arguments; die and skip exit) and sets root (the repository) and SUDO.

# Installs the Debian packages named in $@ that are missing (--no-install-recommends).
# Skips (see the caller's skip) when QEMU cannot be installed at all.
lib_packages() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		say "installing$missing"
		# shellcheck disable=SC2086 # $missing is a list of package names
		if ! { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends $missing >/dev/null; }; then
			command -v qemu-system-x86_64 >/dev/null ||
				skip "QEMU cannot be installed (apt-get failed for:$missing)"
			die "apt-get could not install:$missing"
		fi
	fi
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not available"
}

lib_derive_kver() {
	dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		sed -n 's/.*linux-headers-\([0-9][^ ,]*\).*/\1/p'
}

lib_download_image() { # into the current directory
	apt-get download "linux-image-$KVER" >/dev/null 2>&1 ||
		apt-get download "linux-image-$KVER-unsigned" >/dev/null 2>&1
}

# KVER given as a series ("6.12"): the newest Debian 12 amd64 kernel ABI of that
# series, e.g. 6.12.117+deb12-amd64 (bookworm-security; the suite is added to
# apt's sources if it is missing).
lib_resolve_kver() {
	local series=$KVER found
	case $series in [0-9]*.[0-9]*) ;; *) return 0 ;; esac
	case $series in *.*.* | *-*) return 0 ;; esac
	lib_find_series() {
		apt-cache search --names-only "^linux-headers-${series//./\\.}[.-][0-9].*-amd64\$" |
			cut -d" " -f1 | grep -vE -- "-(rt|cloud)-amd64$" | sed "s/^linux-headers-//" | sort -V | tail -n1
	}
	found=$(lib_find_series)
	if [ -z "$found" ]; then
		if ! grep -rqs 'bookworm-security' /etc/apt/sources.list /etc/apt/sources.list.d/; then
			say "adding bookworm-security to apt's sources (Debian 12's newer kernels)"
			echo 'deb http://deb.debian.org/debian-security bookworm-security main' |
				$SUDO tee /etc/apt/sources.list.d/nvdla-bookworm-security.list >/dev/null
		fi
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
		found=$(lib_find_series)
	fi
	[ -n "$found" ] || die "no Debian 12 kernel headers of the $series series (linux-headers-$series.*-amd64)"
	KVER=$found
}

# The headers of KVER: installed in /usr/src, else its linux-headers packages
# (the arch one, -common and linux-kbuild) downloaded and unpacked into DIR, never
# installed (installing linux-headers-6.12.* pulls in its kernel image). Sets KDIR.
lib_headers() { # dir
	local dir=$1 pkgs p
	KDIR=/usr/src/linux-headers-$KVER
	[ -d "$KDIR" ] && return 0
	KDIR=$dir/usr/src/linux-headers-$KVER
	[ -f "$dir/.complete" ] && return 0
	say "fetching linux-headers-$KVER (unpacked into $dir, not installed)"
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	pkgs="linux-headers-$KVER $(apt-cache depends "linux-headers-$KVER" |
		sed -n 's/.*Depends: \(linux-\(headers\|kbuild\)-[^ ]*\).*/\1/p' | sort -u | tr '\n' ' ')"
	# shellcheck disable=SC2086 # a list of package names
	(cd "$dir/debs" && apt-get download $pkgs >/dev/null 2>&1) ||
		die "apt-get download $pkgs failed"
	for p in "$dir"/debs/*.deb; do
		dpkg-deb -x "$p" "$dir"
	done
	rm -rf "$dir/debs"
	# The arch tree's Makefile includes the common tree by its absolute path.
	sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$KDIR/Makefile"
	[ -f "$KDIR/Module.symvers" ] || die "no usable headers of $KVER in $dir"
	touch "$dir/.complete"
}

# Where the newest kernels and the Debian 13 chroot live (outside the worktree: kept
# between runs and checkouts).
LIB_CACHE_DIR=${NVDLA_KMD_CACHE:-/var/cache/nvdla-kmd}
LIB_TRIXIE=${CHROOT:-$LIB_CACHE_DIR/trixie}
LIB_MIRROR=http://deb.debian.org/debian
LIB_CHROOT=""      # set when KVER's kbuild runs in the Debian 13 chroot
LIB_HOST_KDIR=""   # KDIR as this host sees it

# KVER names a kernel of Debian 13 (trixie, trixie-backports) rather than Debian 12:
# "newest", a series from 7 on (7.3: its newest), or an ABI such as 7.3.4+deb13-amd64.
lib_is_trixie_kver() {
	case ${KVER:-} in newest | *+deb13-* | [7-9].* | [1-9][0-9].*) return 0 ;; esac
	return 1
}

# Runs a command in the Debian 13 chroot with /proc (objtool reads it), the repository
# and $WORK visible at their own paths. The mounts are private to the command
# (unshare -m): nothing is left mounted when it ends, however it ends.
lib_in_trixie() { # command...
	# shellcheck disable=SC2016,SC2154 # expanded by the inner shell; root: the caller's
	$SUDO unshare -m --propagation private sh -c '
		set -e
		c=$1 binds=$2
		shift 2
		mount -t proc proc "$c/proc"
		for d in $binds; do
			[ -d "$d" ] || continue
			mkdir -p "$c$d"
			mount --bind "$d" "$c$d"
		done
		exec chroot "$c" env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
	' sh "$LIB_TRIXIE" "$root ${WORK:-}" "$@"
}

# The Debian 13 chroot (debootstrap, a few minutes once), its package lists refreshed
# at most daily.
lib_trixie_chroot() {
	if [ ! -f "$LIB_TRIXIE/.complete" ]; then
		command -v debootstrap >/dev/null ||
			$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends debootstrap >/dev/null ||
			die "cannot install debootstrap"
		say "making a Debian 13 chroot in $LIB_TRIXIE (debootstrap, a few minutes once)"
		$SUDO rm -rf "$LIB_TRIXIE"
		$SUDO mkdir -p "$(dirname "$LIB_TRIXIE")"
		$SUDO debootstrap --variant=minbase \
			--include=gcc,make,libc6-dev,pahole,libelf1t64,libssl3t64,kmod \
			trixie "$LIB_TRIXIE" "$LIB_MIRROR" >"$LIB_TRIXIE.log" 2>&1 ||
			die "debootstrap failed ($LIB_TRIXIE.log)"
		echo "deb $LIB_MIRROR trixie-backports main" |
			$SUDO tee "$LIB_TRIXIE/etc/apt/sources.list.d/backports.list" >/dev/null
		$SUDO touch "$LIB_TRIXIE/.complete"
	fi
	if [ -z "$(find "$LIB_TRIXIE/.apt-updated" -mmin -1440 2>/dev/null)" ]; then
		say "refreshing the Debian 13 chroot's package lists"
		lib_in_trixie apt-get update -qq || die "apt-get update in $LIB_TRIXIE failed"
		$SUDO touch "$LIB_TRIXIE/.apt-updated"
	fi
}

# KVER "newest" or a series: the newest amd64 ABI of it in trixie and trixie-backports.
lib_trixie_resolve_kver() {
	local pattern
	case $KVER in *-amd64) return 0 ;; esac
	pattern='[0-9].*'
	[ "$KVER" = newest ] || pattern="${KVER//./\\.}[.-][0-9].*"
	KVER=$(lib_in_trixie apt-cache search --names-only "^linux-headers-${pattern}-amd64\$" |
		cut -d' ' -f1 | grep -vE -- '-(rt|cloud)-amd64$' | sed 's/^linux-headers-//' |
		sort -V | tail -n1)
	[ -n "$KVER" ] || die "no Debian 13 kernel headers for KVER (linux-headers-*-amd64)"
}

# Downloads Debian 13 packages (apt-get download in the chroot) into DIR.
lib_trixie_download() { # dir package...
	local dir=$1 tmp=/var/tmp/nvdla-debs
	shift
	$SUDO rm -rf "$LIB_TRIXIE$tmp"
	$SUDO mkdir -p "$LIB_TRIXIE$tmp" "$dir"
	if ! lib_in_trixie sh -c "cd $tmp && apt-get download $*" >/dev/null 2>&1; then
		# Package lists older than the archive (a day at most): refresh them, retry.
		lib_in_trixie apt-get update -qq || true
		lib_in_trixie sh -c "cd $tmp && apt-get download $*" >/dev/null 2>&1 ||
			die "apt-get download $* (Debian 13) failed"
	fi
	$SUDO mv "$LIB_TRIXIE$tmp"/*.deb "$dir/"
	$SUDO rm -rf "$LIB_TRIXIE$tmp"
}

# A Debian 13 kernel's headers (linux-headers, -common, linux-kbuild) unpacked, not
# installed, in the chroot. Sets KDIR (the chroot's path), LIB_CHROOT, LIB_HOST_KDIR.
lib_trixie_headers() {
	local deps deb
	KDIR=/usr/src/linux-headers-$KVER
	LIB_CHROOT=$LIB_TRIXIE
	LIB_HOST_KDIR=$LIB_TRIXIE$KDIR
	[ -f "$LIB_HOST_KDIR/Module.symvers" ] && return 0
	say "unpacking linux-headers-$KVER in $LIB_TRIXIE"
	deps=$(lib_in_trixie apt-cache depends "linux-headers-$KVER" |
		sed -n 's/.*Depends: \(linux-\(headers\|kbuild\)-[^ ]*\).*/\1/p' | sort -u | tr '\n' ' ')
	# shellcheck disable=SC2086 # a list of package names
	lib_trixie_download "$LIB_TRIXIE/var/tmp/nvdla-headers" "linux-headers-$KVER" $deps
	for deb in "$LIB_TRIXIE"/var/tmp/nvdla-headers/*.deb; do
		$SUDO dpkg-deb -x "$deb" "$LIB_TRIXIE/"
	done
	$SUDO rm -rf "$LIB_TRIXIE/var/tmp/nvdla-headers"
	[ -f "$LIB_HOST_KDIR/Module.symvers" ] || die "no usable headers of $KVER in $LIB_TRIXIE"
}

# The headers of any KVER (Debian 12's or Debian 13's): sets KVER, KDIR, LIB_HOST_KDIR
# (and LIB_CHROOT for Debian 13). Debian 12's are cached in CACHE_ROOT/$KVER/headers
# when not installed.
lib_kernel_headers() { # cache-root
	if lib_is_trixie_kver; then
		lib_trixie_chroot
		lib_trixie_resolve_kver
		lib_trixie_headers
	else
		lib_resolve_kver
		lib_headers "$1/$KVER/headers"
		LIB_HOST_KDIR=$KDIR
	fi
}

# The uncompressed kernel of a bzImage (PVH boots it twice as fast): its xz (6.1) or
# zstd (6.12+) payload, as the kernel's scripts/extract-vmlinux does.
lib_extract_vmlinux() { # vmlinuz vmlinux
	local off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$1" | head -n1 | cut -d: -f1 || true)
	if [ -n "$off" ]; then
		tail -c +"$((off + 1))" "$1" | xz -dc >"$2" 2>/dev/null || true
	else
		off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$1" | head -n1 | cut -d: -f1 || true)
		[ -n "$off" ] || die "no xz or zstd payload in $1"
		command -v zstd >/dev/null || die "zstd is needed to unpack $1 (apt-get install zstd)"
		tail -c +"$((off + 1))" "$1" | zstd -dcq >"$2" 2>/dev/null || true
	fi
	head -c 4 "$2" | grep -q ELF || die "could not extract vmlinux from $1"
}

# A Debian 13 kernel: Debian 13 splits the image into linux-binary-$KVER (vmlinuz, in
# /usr/lib/modules/$KVER), linux-modules-$KVER and linux-base-$KVER (modules.order,
# modules.builtin); downloaded in the chroot (not installed), the
# DRM modules moved to root/lib/modules (where modinfo -b looks), cached in
# $LIB_CACHE_DIR/kernels/$KVER. Sets cache kroot.
lib_trixie_kernel() {
	local debs=$LIB_CACHE_DIR/kernels/.debs m=./usr/lib/modules/$KVER
	cache=$LIB_CACHE_DIR/kernels/$KVER
	kroot=$cache/root
	if [ ! -f "$cache/vmlinux" ] || [ ! -f "$kroot/lib/modules/$KVER/modules.dep" ]; then
		say "fetching linux-binary-$KVER and linux-modules-$KVER (Debian 13; vmlinuz and the DRM modules only)"
		$SUDO rm -rf "$cache" "$debs"
		$SUDO mkdir -p "$kroot"
		lib_trixie_download "$debs" "linux-binary-$KVER" "linux-modules-$KVER" "linux-base-$KVER"
		dpkg-deb --fsys-tarfile "$debs/linux-binary-${KVER}_"*.deb |
			$SUDO tar -x -C "$kroot" "$m/vmlinuz" || die "no vmlinuz in linux-binary-$KVER"
		dpkg-deb --fsys-tarfile "$debs/linux-base-${KVER}_"*.deb |
			$SUDO tar -x -C "$kroot" "$m/modules.order" "$m/modules.builtin" \
				"$m/modules.builtin.modinfo" || die "no modules.builtin in linux-base-$KVER"
		dpkg-deb --fsys-tarfile "$debs/linux-modules-${KVER}_"*.deb |
			$SUDO tar -x -C "$kroot" --wildcards "$m/kernel/drivers/gpu/drm/*" ||
			die "no DRM modules in linux-modules-$KVER"
		$SUDO mkdir -p "$kroot/lib/modules"
		$SUDO mv "$kroot/usr/lib/modules/$KVER" "$kroot/lib/modules/"
		$SUDO rm -rf "$debs" "$kroot/usr"
		$SUDO depmod -b "$kroot" "$KVER"
		lib_extract_vmlinux "$kroot/lib/modules/$KVER/vmlinuz" "$cache/vmlinux.tmp"
		$SUDO mv "$cache/vmlinux.tmp" "$cache/vmlinux"
	fi
}

# The kernel to boot and build against: KVER (given, or the ABI linux-headers-amd64
# depends on; a series such as 6.12 means its newest Debian 12 kernel; "newest" or a
# series from 7 on a Debian 13 kernel), its headers KDIR (lib_kernel_headers), and in
# CACHE_ROOT/$KVER (Debian 12) or $LIB_CACHE_DIR/kernels/$KVER (Debian 13) the
# uncompressed vmlinux (PVH boot) and root/ with the DRM modules of its image package
# (downloaded, never installed). Sets KVER KDIR LIB_HOST_KDIR LIB_CHROOT cache kroot.
lib_kernel() { # cache-root
	local cache_root=$1 fixed=${KVER:+yes} debs deb
	if lib_is_trixie_kver; then
		lib_kernel_headers "$cache_root"
		lib_trixie_kernel
		return 0
	fi
	[ -n "${KVER:-}" ] || KVER=$(lib_derive_kver)
	lib_resolve_kver
	[ -n "$KVER" ] || die "cannot derive the kernel ABI from linux-headers-amd64"
	KDIR=/usr/src/linux-headers-$KVER
	cache=$cache_root/$KVER
	kroot=$cache/root
	# .drm-helpers: the cache has every drm_*.ko (drm_exec among them), not only three.
	if [ ! -f "$cache/vmlinux" ] || [ ! -f "$kroot/lib/modules/$KVER/modules.dep" ] ||
		[ ! -f "$cache/.drm-helpers" ]; then
		say "fetching linux-image-$KVER (extracting vmlinuz and the DRM modules only)"
		rm -rf "$cache"
		mkdir -p "$cache" "$kroot"
		if ! (cd "$cache" && lib_download_image); then
			# Stale package lists, or the archive moved on to a newer ABI: update, retry.
			say "refreshing the package lists (and linux-headers-amd64)"
			$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
			$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends linux-headers-amd64 >/dev/null || true
			[ -n "$fixed" ] || KVER=$(lib_derive_kver)
			KDIR=/usr/src/linux-headers-$KVER
			cache=$cache_root/$KVER
			kroot=$cache/root
			mkdir -p "$cache" "$kroot"
			(cd "$cache" && lib_download_image) || die "apt-get download linux-image-$KVER failed"
		fi
		debs=("$cache"/linux-image-*.deb)
		deb=${debs[0]}
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kroot" --wildcards \
			"./boot/vmlinuz-$KVER" \
			"./lib/modules/$KVER/kernel/drivers/gpu/drm/drm.ko*" \
			"./lib/modules/$KVER/kernel/drivers/gpu/drm/drm_*.ko*" \
			"./lib/modules/$KVER/kernel/drivers/gpu/drm/scheduler/*" \
			"./lib/modules/$KVER/kernel/drivers/gpu/drm/vgem/*" \
			"./lib/modules/$KVER/modules.order" \
			"./lib/modules/$KVER/modules.builtin" \
			"./lib/modules/$KVER/modules.builtin.modinfo"
		rm -f "$deb"
		depmod -b "$kroot" "$KVER"
		lib_extract_vmlinux "$kroot/boot/vmlinuz-$KVER" "$cache/vmlinux"
		touch "$cache/.drm-helpers"
	fi
	lib_headers "$cache/headers"
	LIB_HOST_KDIR=$KDIR
}

# QEMU's accelerator: KVM when /dev/kvm is usable and a guest really boots with it (on
# some hosts /dev/kvm exists but QEMU aborts or the guest hangs), else TCG. QEMU_ACCEL=kvm
# or tcg decides without the probe; the probe's verdict is kept in $cache/accel. Sets
# the array lib_qemu_accel (-accel and -cpu options).
lib_qemu_accel() {
	local accel=${QEMU_ACCEL:-} dir
	if [ -z "$accel" ]; then
		accel=$(cat "$cache/accel" 2>/dev/null || true)
	fi
	if [ -z "$accel" ]; then
		accel=tcg
		if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
			dir=$(mktemp -d)
			mkdir -p "$dir/root/bin"
			cp /bin/busybox "$dir/root/bin/"
			printf '#!/bin/busybox sh\n/bin/busybox echo KVM-PROBE-OK\n/bin/busybox poweroff -f\n' \
				>"$dir/root/init"
			chmod +x "$dir/root/init"
			(cd "$dir/root" && find . | cpio -o -H newc --quiet) >"$dir/probe.cpio"
			# In a subshell of its own (not exec'd): QEMU may abort, and bash would say so.
			(timeout 20 qemu-system-x86_64 -accel kvm -cpu host -machine pc -m 256M -display none \
				-vga none -nic none -no-reboot -monitor none -serial "file:$dir/serial.log" \
				-kernel "$cache/vmlinux" -initrd "$dir/probe.cpio" \
				-append "console=ttyS0 quiet panic=-1" || true) >/dev/null 2>&1
			grep -q KVM-PROBE-OK "$dir/serial.log" 2>/dev/null && accel=kvm
			rm -rf "$dir"
			say "/dev/kvm exists; a KVM guest $([ $accel = kvm ] && echo boots: KVM || echo does not boot here: TCG)"
		fi
		echo "$accel" | $SUDO tee "$cache/accel" >/dev/null
	fi
	# shellcheck disable=SC2034 # lib_qemu_accel: the caller's QEMU options
	case $accel in
	kvm) lib_qemu_accel=(-accel kvm -cpu host) ;;
	tcg) lib_qemu_accel=(-accel tcg -cpu max) ;;
	*) die "QEMU_ACCEL must be kvm or tcg, not $accel" ;;
	esac
}

# Kernel options that make use-after-free and corruption show, as far as Debian's
# kernels allow (none has KASAN or DEBUG_PAGEALLOC): SLUB debugging (red zones,
# poisoning, sanity checks, owner tracking; CONFIG_SLUB_DEBUG), freed pages poisoned
# (CONFIG_PAGE_POISONING; both take precedence over init_on_free, which is asked for
# anyway), and KFENCE sampling one allocation every 50 ms (6.12 and 7.x; 6.1 has no
# KFENCE and ignores it).
# shellcheck disable=SC2034 # used by the callers
LIB_MEMORY_DEBUG="slub_debug=FZPU page_poison=1 init_on_free=1 kfence.sample_interval=50"

# make in KVER's kbuild environment: here, or in the Debian 13 chroot.
lib_kmake() { # make arguments...
	if [ -n "$LIB_CHROOT" ]; then
		lib_in_trixie make "$@"
	else
		make "$@"
	fi
}

# nvdla.ko into out-dir (NVDLA_SELFTEST=selftest), warnings are errors.
lib_build_module() { # out-dir selftest
	local log=$1.log
	# Objects of another kernel must go: Kbuild's command lines can be the same for two
	# kernels (relative include paths), and it would link them in.
	if [ "$(cat "$1/.kernel" 2>/dev/null)" != "$KDIR" ]; then
		rm -rf "$1"
		mkdir -p "$1"
		echo "$KDIR" >"$1/.kernel"
	fi
	# shellcheck disable=SC2154 # root: the caller's
	if ! lib_kmake -C "$root/kmd" KDIR="$KDIR" OUT="$1" NVDLA_SELFTEST="$2" >"$log" 2>&1; then
		cat "$log"
		die "module build failed ($1)"
	fi
	if grep -E 'warning:|error:' "$log"; then
		die "the module build has warnings ($1)"
	fi
}

# Compiler flags for static test programs: the UAPI headers of KVER's build tree
# after the system headers (-idirafter), so that drm.h (Debian's linux-libc-dev has
# none) and what it includes but an older linux-libc-dev lacks (7.x's drm_mode.h
# includes linux/bits.h) come from the same kernel; -D__user= as headers_install does.
lib_uapi_flags() {
	local d dirs=""
	for d in "$LIB_HOST_KDIR" "${LIB_HOST_KDIR%/*}/linux-headers-${KVER%-*}-common"; do
		[ -f "$d/include/uapi/drm/drm.h" ] && { dirs="$d/include/uapi/drm $d/include/uapi"; break; }
	done
	[ -n "$dirs" ] || die "no include/uapi/drm/drm.h in the headers of $KVER"
	printf -- '-D__user= '
	for d in $dirs; do printf -- '-idirafter %s ' "$d"; done
}

# Copies module NAME of the kernel and its dependencies (dependencies first) into
# DIR/NAME.ko and appends the names to the global $lib_module_order.
lib_module_order=""
lib_add_module() { # name dir
	local name=$1 dir=$2 dep file
	case " $lib_module_order " in *" $name "*) return ;; esac
	file=$(modinfo -b "$kroot" -k "$KVER" -F filename "$name" 2>/dev/null) ||
		die "module $name not found in linux-image-$KVER"
	[ "$file" = "(builtin)" ] && return
	for dep in $(modinfo -F depends "$file" | tr ',' ' '); do
		lib_add_module "$dep" "$dir"
	done
	case $file in
	*.ko.xz) xz -dc "$file" >"$dir/$name.ko" ;; # 6.12+ ships modules xz-compressed
	*) cp "$file" "$dir/$name.ko" ;;
	esac
	lib_module_order="$lib_module_order $name"
}

# The dependencies of module file KO (not KO itself) into DIR, in load order.
lib_add_module_deps() { # ko dir
	local dep
	for dep in $(modinfo -F depends "$1" | tr ',' ' '); do
		lib_add_module "$dep" "$2"
	done
}

# The line the guests' /init prints just before it loads nvdla.ko. A guest whose
# serial log lacks it died or hung while booting (the kernel or the emulator: an
# oops in early boot under TCG has happened, before any module of ours), not in
# the driver: lib_boot boots such a guest once more. Never after the module loaded.
LIB_MODULE_MARKER="guest: loading nvdla.ko"

# Kernel command-line words appended for a run (GUEST_APPEND): e.g.
# rdinit=/none (a boot that always dies), NVDLA_INJECT=fail (a failing guest check)
# or NVDLA_INJECT=crash (a crash right after nvdla.ko loaded); the guests' /init sees
# NVDLA_INJECT in its environment. For testing the harness itself.
# shellcheck disable=SC2034 # used by the callers
LIB_GUEST_APPEND=${GUEST_APPEND:-}

# Runs the caller's BOOT function (QEMU writing the serial LOG; it sets qrc, QEMU's
# exit status) and, when the guest never reached nvdla.ko, once more, saying so; a
# second such boot fails the test. FILES: more logs of a boot to keep apart
# (FILE.boot1). Sets lib_boot_retries (0 or 1).
# shellcheck disable=SC2034,SC2154 # lib_boot_retries: the caller's; qrc: set by its BOOT
lib_boot() { # log boot-function [files...]
	local log=$1 boot=$2 f
	shift 2
	lib_boot_retries=0
	for f in "$log" "$@"; do
		rm -f "$f.boot1"
	done
	"$boot"
	# No output at all and not a timeout: QEMU cannot run (the caller's verdict).
	[ -s "$log" ] || [ "$qrc" = 124 ] || return 0
	grep -qa "$LIB_MODULE_MARKER" "$log" && return 0
	say "the guest died before loading nvdla.ko (no \"$LIB_MODULE_MARKER\" line; QEMU exit $qrc):" \
		"a kernel or emulator failure at boot, not the driver's; booting once more (retry 1 of 1)"
	grep -a -m4 -E 'Kernel panic|BUG:|Oops|WARNING:|RIP:|int3' "$log" | sed 's/^/    first boot: /' || true
	for f in "$log" "$@"; do
		[ -e "$f" ] && mv -f "$f" "$f.boot1"
	done
	lib_boot_retries=1
	"$boot"
	[ -s "$log" ] || [ "$qrc" = 124 ] || return 0
	grep -qa "$LIB_MODULE_MARKER" "$log" && return 0
	grep -a -m8 -E 'Kernel panic|BUG:|Oops|WARNING:|RIP:|int3|No working init' "$log" | sed 's/^/    second boot: /' || true
	die "the guest died before loading nvdla.ko on both boots (QEMU exit $qrc): the kernel or QEMU fails at boot; serial logs: $log.boot1, $log"
}
