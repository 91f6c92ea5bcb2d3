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

# The kernel to boot and build against: KVER (given, or the ABI linux-headers-amd64
# depends on; a series such as 6.12 means its newest Debian 12 kernel), its headers
# KDIR (lib_headers), and in CACHE_ROOT/$KVER the uncompressed vmlinux (PVH boot)
# and root/ with the DRM modules of its image package (downloaded, never
# installed). Sets KVER KDIR cache kroot.
lib_kernel() { # cache-root
	local cache_root=$1 fixed=${KVER:+yes} debs deb vmlinuz off
	[ -n "${KVER:-}" ] || KVER=$(lib_derive_kver)
	lib_resolve_kver
	[ -n "$KVER" ] || die "cannot derive the kernel ABI from linux-headers-amd64"
	KDIR=/usr/src/linux-headers-$KVER
	cache=$cache_root/$KVER
	kroot=$cache/root
	# .drm-helpers: the cache has every drm_*.ko (drm_exec since kmd-fix), not only three.
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
		# The uncompressed kernel boots through PVH, twice as fast as the bzImage.
		vmlinuz=$kroot/boot/vmlinuz-$KVER
		# The payload is xz (6.1) or zstd (6.12+) compressed.
		off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n1 | cut -d: -f1 || true)
		if [ -n "$off" ]; then
			tail -c +"$((off + 1))" "$vmlinuz" | xz -dc >"$cache/vmlinux" 2>/dev/null || true
		else
			off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$vmlinuz" | head -n1 | cut -d: -f1 || true)
			[ -n "$off" ] || die "no xz or zstd payload in $vmlinuz"
			command -v zstd >/dev/null || die "zstd is needed to unpack $vmlinuz (apt-get install zstd)"
			tail -c +"$((off + 1))" "$vmlinuz" | zstd -dcq >"$cache/vmlinux" 2>/dev/null || true
		fi
		head -c 4 "$cache/vmlinux" | grep -q ELF || die "could not extract vmlinux"
		touch "$cache/.drm-helpers"
	fi
	lib_headers "$cache/headers"
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
	if ! make -C "$root/kmd" KDIR="$KDIR" OUT="$1" NVDLA_SELFTEST="$2" >"$log" 2>&1; then
		cat "$log"
		die "module build failed ($1)"
	fi
	if grep -E 'warning:|error:' "$log"; then
		die "the module build has warnings ($1)"
	fi
}

# The directory of the kernel's UAPI drm.h (Debian's linux-libc-dev has none): static
# test programs include it after the system headers (-idirafter).
lib_drm_uapi_dir() {
	local f
	for f in "$KDIR/include/uapi/drm/drm.h" \
		"${KDIR%/*}/linux-headers-${KVER%-*}-common/include/uapi/drm/drm.h"; do
		[ -f "$f" ] && { dirname "$f"; return 0; }
	done
	die "no drm.h in the headers of $KVER"
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
