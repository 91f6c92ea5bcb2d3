#!/bin/busybox sh
# shellcheck shell=dash disable=SC2012,SC2317 # busybox ash; functions run through check()
# SPDX-License-Identifier: MIT
#
# Guest check (docs/virtual-platform.md): a host model that stops answering makes the running
# job fail with EIO instead of the guest spinning or waiting for it. The model is told to hang
# for HANG_MS (the vp_hang test hook of nvdla_vp --test-hooks); a job submitted meanwhile must
# fail with EIO, the kernel must log that the model did not answer within the short limit of a
# register access, and once the model answers again the device is reset and the next job is
# correct. Also the hooks' permissions (root only). Runs in the guest of
# tests/vp/run.sh (nvdla_vp_guest, nvdla_runtime, `on`, the regression loadables in
# /vp/vectors); prints "ok   guest: ..." / "FAIL guest: ..." lines and
# exits with the number of failures.
HANG_MS=${HANG_MS:-3000}
cfg=nv_full
failed=0
check() { # description command...
	local what=$1
	shift
	if "$@"; then echo "ok   guest: $what"; else echo "FAIL guest: $what"; failed=$((failed + 1)); fi
}
centiseconds() { sed 's/^\([0-9]*\)\.\([0-9]*\) .*/\1\2/' /proc/uptime; }

node=$(nvdla_vp_guest node $cfg) || { echo "FAIL guest: no $cfg device"; exit 1; }
dev=/sys/class/drm/${node#/dev/dri/}/device
f=/vp/vectors/$cfg/flatbufs/CONV_D_L0_0_fbuf
[ -f "$f" ] || f=$(ls /vp/vectors/$cfg/flatbufs/*_fbuf | head -n1)
run() { # output log
	on $cfg nvdla_runtime --backend drm --config $cfg --loadable "$f" --output "$1" >"$2" 2>&1
}
same_output() { [ "$(md5sum </tmp/hang0.dimg)" = "$(md5sum </tmp/hang2.dimg)" ]; }
timeouts() { sed -n 's/^timeouts //p' "$dev"/vp_stats; }

# The hooks disturb the model: root only (guest-init.sh checks vp_ping's 400).
check "vp_stall and vp_hang are writable by root only" \
	[ "$(stat -c %a "$dev"/vp_stall) $(stat -c %a "$dev"/vp_hang)" = "200 200" ]
check "model hang: a job runs before" run /tmp/hang0.dimg /tmp/hang0.txt
before=$(timeouts)
lines=$(dmesg | wc -l)
since() { dmesg | tail -n +$((lines + 1)); } # the kernel log since the hang (not cleared)
logged() { since | grep -q "$1"; }
not_logged() { ! since | grep -q "$1"; }
echo "$HANG_MS" >"$dev"/vp_hang || { echo "FAIL guest: the vp_hang test hook"; exit 1; }
start=$(centiseconds)
run /tmp/hang1.dimg /tmp/hang1.txt
rc=$?
took=$(($(centiseconds) - start))
echo "info model hang: the job ended after $((took * 10)) ms (the model hung for $HANG_MS ms)"
check "model hang: the job submitted meanwhile fails with EIO" \
	sh -c "[ $rc != 0 ] && grep -q EIO /tmp/hang1.txt"
[ $rc != 0 ] || sed 's/^/info /' /tmp/hang1.txt
check "model hang: a register access timed out (vp_stats timeouts $before -> $(timeouts))" \
	[ "$(timeouts)" -gt "$before" ]
check "model hang: the kernel says the model did not answer within the short limit" \
	logged "did not answer within [0-9]* us"
check "model hang: the job failed through a register access, not the job timeout" \
	not_logged "ran longer than"
since | grep -E "did not answer|register access failed|answers again" | sed 's/^/info /'
sleep $((HANG_MS / 1000 + 1))
check "model hang: the next job after the model answers again runs" run /tmp/hang2.dimg /tmp/hang2.txt ||
	sed 's/^/info /' /tmp/hang2.txt
check "model hang: and writes the same output as the job before the hang" same_output
check "model hang: the device was reset, not wedged" not_logged "is wedged"
exit $failed
