#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The kernel's checkpatch.pl --strict over the kernel C: the driver (kmd/*.c, kmd/*.h), the
# engine it shares with userspace (kmd/engine/*.c, kmd/engine/*.h) and the test platform device module
# (tests/kmd/platdev/); then over the userspace C guest test programs (tests/kmd/nvdla_kmd_test.c,
# tests/kmd/guest_common.h, tests/vp/nvdla_vp_guest.c) with the checks that only fit kernel C
# left out. Part of make format-check (and so of CI). checkpatch.pl comes from Debian's
# linux-source package (make deps installs it): only scripts/checkpatch.pl and its two data
# files are unpacked from its tarball, into CACHE.
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

# Runs checkpatch.pl --strict with the given options and files: its findings, empty when clean.
check() {
	perl "$script" --no-tree --strict --terse --show-types "$@" 2>&1 |
		grep -vE '^total: 0 errors, 0 warnings, 0 checks|^$' || true
}

cd "$root"
kernel_c=(kmd/*.c kmd/*.h kmd/engine/*.c kmd/engine/*.h tests/kmd/platdev/*.c)
guest_c=(tests/kmd/nvdla_kmd_test.c tests/kmd/guest_common.h tests/vp/nvdla_vp_guest.c
	tests/kmd/arm64/nvdla_dt_test.c)
# Left out for the userspace guest programs only, as inherent to userspace C:
#   PREFER_KERNEL_TYPES  u32/u64 are kernel types; userspace has <stdint.h>'s uint32_t and co.
#   CAMELCASE            the only mixed-case names are the C library's: <inttypes.h>'s PRIu64,
#                        PRId64, PRIx64 format macros and C11's _Static_assert.
#   LONG_LINE_STRING     printf formats built with PRIu64 and co. are several literals, which
#                        checkpatch exempts from the line length only as one; kept whole on
#                        one line so that the messages run.sh and guest-init.sh grep for can
#                        be found in the source as printed.
out=$(check -f "${kernel_c[@]}"
	check --ignore PREFER_KERNEL_TYPES,CAMELCASE,LONG_LINE_STRING -f "${guest_c[@]}")
rm -f .checkpatch-camelcase.*
if [ -n "$out" ]; then
	echo "$out"
	die "checkpatch.pl --strict reports the lines above"
fi
say "kmd/*.[ch] kmd/engine/*.[ch] tests/kmd/platdev/*.c: clean (--strict)"
say "${guest_c[*]}: clean (--strict; userspace: without PREFER_KERNEL_TYPES, CAMELCASE," \
	"LONG_LINE_STRING)"
