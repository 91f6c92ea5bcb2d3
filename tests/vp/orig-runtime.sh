# shellcheck shell=bash disable=SC2086 # ORIG_LOADABLES: names, split on purpose
# SPDX-License-Identifier: MIT
#
# The original runtime's ioctl sequence in the virtual platform (docs/kernel-driver.md, "The
# original runtime"): sourced by tests/vp/run.sh on the host (orig_stage) and by
# tests/vp/guest-init.sh in the guest (orig_checks, busybox sh).
#
# nvdla_vp_orig (tests/vp/guest/orig_sequence.cpp, static) runs the original compiler's loadables
# (../shared/vectors/orig-compiler) for nv_full, nv_small and nv_large through the kernel with
# the original runtime's calls: GEM_CREATE of sizes that are not page multiples,
# PRIME_HANDLE_TO_FD, GEM_MMAP, SUBMIT with dma-buf fds in the address list, GEM_DESTROY
# after the fd was closed (nv_full, nv_large) or with it still open as the original does
# (nv_small); each output is judged as the emulator tests judge it. ORIG_LOADABLES
# (MODEL/VARIANT names, space-separated) limits the run; empty: every loadable of the three
# configurations.

# Host: the program and the corpus (JSON, input, expected output, the nv_full, nv_small and
# nv_large loadables) into the initramfs at /vp/orig.
orig_stage() { # initrd shared_dir program
	local initrd=$1 corpus=$2/vectors/orig-compiler program=$3 model f
	[ -x "$program" ] || die "no nvdla_vp_orig at $program (make vp-guest)"
	strip -o "$initrd/bin/nvdla_vp_orig" "$program"
	# shellcheck disable=SC2154 # here: run.sh's directory
	cp "$here/orig-runtime.sh" "$initrd/vp/orig-runtime.sh"
	if [ ! -f "$corpus/index.json" ]; then
		say "no original-compiler loadables in $corpus: the original-sequence run is skipped"
		return 0
	fi
	mkdir -p "$initrd/vp/orig"
	cp "$corpus/index.json" "$initrd/vp/orig/"
	for model in "$corpus"/*/; do
		model=$(basename "$model")
		[ -f "$corpus/$model/meta.json" ] || continue
		mkdir -p "$initrd/vp/orig/$model"
		for f in meta.json calib.json input.f32 expected.f32; do
			[ ! -f "$corpus/$model/$f" ] || cp "$corpus/$model/$f" "$initrd/vp/orig/$model/"
		done
		for f in "$corpus/$model"/*_nv_{full,small,large}*.nvdla; do
			[ ! -f "$f" ] || cp "$f" "$initrd/vp/orig/$model/"
		done
	done
	echo "ORIG_LOADABLES=\"${ORIG_LOADABLES:-}\"" >>"$initrd/vp/settings"
}

# Guest: result lines from nvdla_vp_orig; every failure counts in guest-init's $fail.
orig_checks() {
	local full small
	full=$(nvdla_vp_guest node nv_full) && small=$(nvdla_vp_guest node nv_small) &&
		nvdla_vp_orig prime "$full" "$small" || fail=$((fail + 1))
	[ -f /vp/orig/index.json ] || return 0
	on nv_full nvdla_vp_orig corpus /vp/orig nv_full $ORIG_LOADABLES || fail=$((fail + 1))
	on nv_small nvdla_vp_orig corpus /vp/orig nv_small --keep-fds $ORIG_LOADABLES ||
		fail=$((fail + 1))
	on nv_large nvdla_vp_orig corpus /vp/orig nv_large $ORIG_LOADABLES || fail=$((fail + 1))
}
