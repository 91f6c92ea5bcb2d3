#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The kernel module through DKMS (docs/kernel-driver.md, "DKMS").
#
#   dkms.sh install [KVER]   make dkms-install: the DKMS source tree in /usr/src/nvdla-<version>,
#                            dkms add, build and install (for KVER, default the running kernel;
#                            DKMS rebuilds it for every kernel installed later)
#   dkms.sh remove           make dkms-remove: dkms remove --all, the source tree deleted
#   dkms.sh test KVER...     make test-dkms: DKMS's own build of a staged copy, in a private
#                            DKMS tree (nothing installed), against each kernel's headers
#                            (a series such as 6.12 means its newest Debian 12 kernel, newest
#                            Debian 13's newest, as in make test-kmd; Debian 13 kernels are
#                            built with the Debian 13 chroot's dkms); warnings are errors
#
# Environment: WORK (test: build/dkms-test), KMD_CACHE (headers not installed are unpacked
# there, shared with make test-kmd).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$root/kmd/dkms.conf")

say() { printf 'dkms: %s\n' "$*"; }
die() { printf 'dkms: FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'dkms: SKIP: %s\n' "$*"; exit 0; }

# The DKMS source tree: dkms.conf at its top, kmd/, kmd/engine/ and the headers they include.
stage() { # dir
	local dir=$1
	mkdir -p "$dir/kmd/engine" "$dir/include/nvdla/hw" "$dir/include/uapi/drm"
	cp "$root/kmd/dkms.conf" "$dir/"
	cp "$root"/kmd/{Kbuild,Makefile,conftest.sh} "$root"/kmd/*.[ch] "$dir/kmd/"
	cp "$root"/kmd/engine/*.[ch] "$dir/kmd/engine/"
	cp "$root"/include/nvdla/hw/*.h "$root"/include/nvdla/hw/*.def "$dir/include/nvdla/hw/"
	cp "$root/include/uapi/drm/nvdla_drm.h" "$dir/include/uapi/drm/"
}

need_dkms() {
	command -v dkms >/dev/null && return 0
	say "installing dkms"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		dkms >/dev/null || die "apt-get could not install dkms"
}

case ${1:-} in
install)
	kver=${2:-$(uname -r)}
	need_dkms
	src=/usr/src/nvdla-$version
	if dkms status "nvdla/$version" | grep -q .; then
		$SUDO dkms remove "nvdla/$version" --all >/dev/null
	fi
	$SUDO rm -rf "$src"
	tmp=$(mktemp -d)
	stage "$tmp/src"
	$SUDO cp -r "$tmp/src" "$src"
	rm -rf "$tmp"
	$SUDO dkms add "nvdla/$version"
	$SUDO dkms install "nvdla/$version" -k "$kver"
	say "nvdla $version installed for $kver (and rebuilt by DKMS for new kernels)"
	;;
remove)
	need_dkms
	if dkms status "nvdla/$version" | grep -q .; then
		$SUDO dkms remove "nvdla/$version" --all
	fi
	$SUDO rm -rf "/usr/src/nvdla-$version"
	say "nvdla $version removed"
	;;
test)
	shift
	[ $# -gt 0 ] || die "usage: $0 test KVER..."
	WORK=${WORK:-$root/build/dkms-test}
	KMD_CACHE=${KMD_CACHE:-$root/build/kmd-test/cache}
	# shellcheck source=tests/kmd/lib.sh
	. "$here/lib.sh"
	need_dkms
	# DKMS here, or in the Debian 13 chroot for its kernels (their kbuild needs its libc).
	run_dkms() {
		if [ -n "$LIB_CHROOT" ]; then lib_in_trixie dkms "$@"; else dkms "$@"; fi
	}
	fail=0
	for KVER in "$@"; do
		lib_kernel_headers "$KMD_CACHE"
		if [ -n "$LIB_CHROOT" ] && ! lib_in_trixie sh -c "command -v dkms" >/dev/null; then
			say "installing dkms in $LIB_CHROOT"
			lib_in_trixie apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends dkms >/dev/null ||
				die "apt-get could not install dkms in $LIB_CHROOT"
		fi
		rm -rf "$WORK/$KVER"
		mkdir -p "$WORK/$KVER/tree"
		stage "$WORK/$KVER/src/nvdla-$version"
		log=$WORK/$KVER/build.log
		args=(--sourcetree "$WORK/$KVER/src" --dkmstree "$WORK/$KVER/tree" -k "$KVER"
			--kernelsourcedir "$KDIR")
		if run_dkms add "${args[@]}" "nvdla/$version" >"$log" 2>&1 &&
			run_dkms build "${args[@]}" "nvdla/$version" >>"$log" 2>&1; then
			made=$(find "$WORK/$KVER/tree/nvdla/$version" -name make.log | head -n1)
			ko=$(find "$WORK/$KVER/tree/nvdla/$version" -name 'nvdla.ko*' | head -n1)
			if [ -z "$ko" ]; then
				say "$KVER: DKMS built no nvdla.ko"
				fail=1
			elif [ -n "$made" ] && grep -E 'warning:|error:' "$made"; then
				say "$KVER: the DKMS build has warnings ($made)"
				fail=1
			else
				say "ok: DKMS builds nvdla $version for $KVER ($ko)"
			fi
		else
			cat "$log"
			find "$WORK/$KVER/tree" -name make.log -exec cat {} + 2>/dev/null || true
			say "$KVER: dkms build failed"
			fail=1
		fi
	done
	[ $fail = 0 ] || die "DKMS builds failed"
	;;
*)
	echo "usage: $0 install [KVER] | remove | test KVER..." >&2
	exit 2
	;;
esac
