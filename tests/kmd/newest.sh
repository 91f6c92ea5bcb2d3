#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make kmd-newest: nvdla.ko built, as shipped and with the selftest engine, warnings
# being errors, against the newest kernel Debian offers (trixie-backports). Its kbuild
# tools need Debian 13's libc and compiler, so the build runs in a Debian 13 chroot
# made with debootstrap and kept in CHROOT (default /var/cache/nvdla-kmd/trixie,
# outside the worktree); the kernel's linux-headers, -common and linux-kbuild packages
# are downloaded and unpacked in it (not installed: the headers depend on the image).
# Needs root (debootstrap, chroot, mount). make test-kmd KVER=newest boots it.
#
# Environment: CHROOT, KVER (newest, a series such as 7.3, or an ABI such as
# 7.3.4+deb13-amd64; default newest), WORK (default build/kmd-newest).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=${WORK:-$root/build/kmd-newest}
KVER=${KVER:-newest}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

say() { printf 'kmd-newest: %s\n' "$*"; }
die() { printf 'kmd-newest: FAIL: %s\n' "$*" >&2; exit 1; }

# shellcheck source=tests/kmd/lib.sh
. "$here/lib.sh"
lib_is_trixie_kver || die "KVER=$KVER is not a Debian 13 kernel (newest, 7.x, or *+deb13-amd64)"
lib_kernel_headers "$WORK"
mkdir -p "$WORK"
lib_build_module "$WORK/module" ""
say "ok: nvdla.ko builds warning-free for $KVER ($WORK/module/kmd/nvdla.ko)"
lib_build_module "$WORK/module-selftest" y
say "ok: nvdla.ko (selftest engine) builds warning-free for $KVER"
