#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The kernel's checkpatch.pl --strict over the kernel C: the driver (kmd/*.c, kmd/*.h), the
# engine it shares with userspace (engine/*.c, engine/*.h) and the test platform device module
# (tests/kmd/platdev/); part of make format-check (and so of CI). checkpatch.pl comes from Debian's linux-source package (make deps installs it): only
# scripts/checkpatch.pl and its two data files are unpacked from its tarball, into CACHE.
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
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1 || true)
	[ -n "$tarball" ] || die "no /usr/src/linux-source-*.tar.xz (install linux-source: make deps)"
	say "unpacking checkpatch.pl from $tarball"
	rm -rf "$CACHE"
	mkdir -p "$CACHE"
	tar -xJf "$tarball" -C "$CACHE" --strip-components=1 --wildcards '*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	[ -f "$script" ] || die "no scripts/checkpatch.pl in $tarball"
fi

cd "$root"
out=$(perl "$script" --no-tree --strict --terse --show-types -f kmd/*.c kmd/*.h engine/*.c \
	engine/*.h tests/kmd/platdev/*.c 2>&1 | grep -vE '^total: 0 errors, 0 warnings, 0 checks|^$' || true)
rm -f .checkpatch-camelcase.*
if [ -n "$out" ]; then
	echo "$out"
	die "checkpatch.pl --strict reports the lines above"
fi
say "kmd/*.[ch] engine/*.[ch] tests/kmd/platdev/*.c: clean (--strict)"
