#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The kernel's checkpatch.pl --strict over the driver's sources (kmd/*.c, kmd/*.h); part of
# make test-kmd. checkpatch.pl comes from Debian's linux-source package (downloaded, not
# installed; only scripts/checkpatch.pl and its two data files are kept, in CACHE).
# kmd/engine/ is shared with userspace (C with <stdint.h> types, clang-format's layout) and
# is not checked here.
#
# Environment: CACHE (default build/kmd-test/cache/checkpatch).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CACHE=${CACHE:-$root/build/kmd-test/cache/checkpatch}

say() { printf 'checkpatch: %s\n' "$*"; }
die() { printf 'checkpatch: FAIL: %s\n' "$*" >&2; exit 1; }

script=$CACHE/scripts/checkpatch.pl
if [ ! -f "$script" ]; then
	pkg=$(apt-cache depends linux-source | sed -n 's/.*Depends: \(linux-source-[0-9.]*\)$/\1/p' |
		head -n1)
	[ -n "$pkg" ] || die "no linux-source package known to apt"
	say "fetching $pkg (checkpatch.pl only)"
	rm -rf "$CACHE"
	mkdir -p "$CACHE/deb"
	(cd "$CACHE/deb" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
	dpkg-deb --fsys-tarfile "$CACHE"/deb/*.deb |
		tar -x --wildcards -O './usr/src/linux-source-*.tar.xz' |
		tar -xJ -C "$CACHE" --strip-components=1 --wildcards '*/scripts/checkpatch.pl' \
			'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	rm -rf "$CACHE/deb"
	[ -f "$script" ] || die "no scripts/checkpatch.pl in $pkg"
fi

cd "$root"
out=$(perl "$script" --no-tree --strict --terse --show-types -f kmd/*.c kmd/*.h 2>&1 |
	grep -vE '^total: 0 errors, 0 warnings, 0 checks|^$' || true)
rm -f .checkpatch-camelcase.*
if [ -n "$out" ]; then
	echo "$out"
	die "checkpatch.pl --strict reports the lines above"
fi
say "kmd/*.c kmd/*.h: clean (--strict)"
