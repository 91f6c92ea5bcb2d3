#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make kmd-newest: nvdla.ko built, as shipped and with the selftest engine, warnings
# being errors, against the newest kernel Debian offers (trixie-backports). Its kbuild
# tools need Debian 13's libc and compiler, so the build runs in a Debian 13 chroot
# made with debootstrap and kept in CHROOT (default /var/cache/nvdla-kmd/trixie,
# outside the worktree); the kernel's linux-headers, -common and linux-kbuild packages
# are downloaded and unpacked in it (not installed: the headers depend on the image).
# Needs root (debootstrap, chroot, mount). Booting that kernel is not done yet.
#
# Environment: CHROOT, KVER (an ABI such as 7.3.4+deb13-amd64; default the newest).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CHROOT=${CHROOT:-/var/cache/nvdla-kmd/trixie}
MIRROR=http://deb.debian.org/debian

say() { printf 'kmd-newest: %s\n' "$*"; }
die() { printf 'kmd-newest: FAIL: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
in_chroot() { chroot "$CHROOT" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }

if [ ! -f "$CHROOT/.complete" ]; then
	command -v debootstrap >/dev/null ||
		apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
		die "cannot install debootstrap"
	say "making a Debian 13 chroot in $CHROOT (debootstrap, a few minutes once)"
	rm -rf "$CHROOT"
	mkdir -p "$(dirname "$CHROOT")"
	debootstrap --variant=minbase --include=gcc,make,libc6-dev,pahole,libelf1t64,libssl3t64 \
		trixie "$CHROOT" "$MIRROR" >"$CHROOT.log" 2>&1 || die "debootstrap failed ($CHROOT.log)"
	echo "deb $MIRROR trixie-backports main" >"$CHROOT/etc/apt/sources.list.d/backports.list"
	touch "$CHROOT/.complete"
fi
mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc" # objtool reads it
trap 'umount "$CHROOT/proc" 2>/dev/null || true' EXIT
in_chroot apt-get update -qq || die "apt-get update in the chroot failed"

if [ -z "${KVER:-}" ]; then
	KVER=$(in_chroot apt-cache search --names-only '^linux-headers-[0-9].*-amd64$' |
		cut -d' ' -f1 | grep -vE -- '-(rt|cloud)-amd64$' | sed 's/^linux-headers-//' |
		sort -V | tail -n1)
fi
[ -n "$KVER" ] || die "no linux-headers-*-amd64 in trixie or trixie-backports"
KDIR=/usr/src/linux-headers-$KVER
if [ ! -d "$CHROOT$KDIR" ]; then
	say "unpacking linux-headers-$KVER in the chroot"
	rm -rf "$CHROOT/debs"
	mkdir -p "$CHROOT/debs"
	in_chroot sh -c "cd /debs && apt-get download linux-headers-$KVER \
		\$(apt-cache depends linux-headers-$KVER |
		  sed -n 's/.*Depends: \(linux-\(headers\|kbuild\)-[^ ]*\).*/\1/p' | sort -u)" \
		>/dev/null 2>&1 || die "apt-get download of linux-headers-$KVER failed"
	for deb in "$CHROOT"/debs/*.deb; do
		dpkg-deb -x "$deb" "$CHROOT/"
	done
	rm -rf "$CHROOT/debs"
fi

fail=0
for selftest in "" y; do
	src=/nvdla
	rm -rf "$CHROOT$src"
	mkdir -p "$CHROOT$src/include"
	cp -r "$root/kmd" "$root/engine" "$CHROOT$src/"
	cp -r "$root/include/nvdla" "$root/include/uapi" "$CHROOT$src/include/"
	log=$CHROOT/nvdla-build${selftest:+-selftest}.log
	if ! in_chroot make -C "$src/kmd" KDIR="$KDIR" NVDLA_SELFTEST="$selftest" >"$log" 2>&1; then
		cat "$log"
		say "build failed for $KVER${selftest:+ (selftest)}"
		fail=1
	elif grep -E 'warning:|error:' "$log"; then
		say "the build for $KVER${selftest:+ (selftest)} has warnings"
		fail=1
	else
		say "ok: nvdla.ko${selftest:+ (selftest engine)} builds warning-free for $KVER"
	fi
done
[ $fail = 0 ] || die "builds against $KVER failed"
