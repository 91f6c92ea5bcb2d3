#!/bin/busybox sh
# shellcheck shell=dash disable=SC2086 # busybox ash; word splitting of plain values intended
# SPDX-License-Identifier: MIT
#
# /init of the virtual-platform guest (tests/vp/run.sh copies it into the
# initramfs with /vp/settings: MODE, JOB_TIMEOUT_MS, FUZZ_ITERATIONS, FUZZ_SEED).
# Loads nvdla.ko, finds the three NVDLAs the host model (nvdla_vp) serves, then
#   MODE=test   runs every check and prints "ok   ..." / "FAIL ..." lines and
#               TEST-VP-RESULT: PASS or FAIL (n)
#   MODE=fuzz   only the fuzzing run, FUZZ_ITERATIONS over both devices
#   MODE=shell  a shell on the console (make vp)
# and powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
. /vp/settings
export PATH=/bin
echo "guest: booted $(uname -r), mode $MODE"

# `on CONFIG COMMAND...`: runs COMMAND seeing only CONFIG's node: its render node in
# /dev/dri, or with accel=1 its accel node in /dev/accel, the other directory empty
# (the runtime takes the first nvdla node it finds; nv_small loadables need nv_small's).
cat >/bin/on <<'EOF'
#!/bin/sh
[ $# -ge 2 ] || { echo "usage: on nv_full|nv_small|nv_large COMMAND [ARGS...]" >&2; exit 2; }
node=$(nvdla_vp_guest node "$1") || exit 1
shift
dir=${node%/*}
n=${node##*/}
class=drm
[ "$dir" = /dev/accel ] && class=accel
dev=$(cat "/sys/class/$class/$n/dev")
mkdir -p /dev/dri /dev/accel
exec unshare -m sh -c 'mount -t tmpfs none /dev/dri && mount -t tmpfs none /dev/accel &&
	mknod "$1/$2" c "$3" "$4" && shift 4 && exec "$@"' sh "$dir" "$n" "${dev%:*}" "${dev#*:}" "$@"
EOF
chmod +x /bin/on

fail=0
step() { # description command...
	local what=$1
	shift
	if "$@"; then echo "ok   guest: $what"; else echo "FAIL guest: $what"; fail=$((fail + 1)); fi
}
logged() { dmesg | grep -q "$1"; }
zero() { # values...: all are 0
	for v in "$@"; do [ "$v" = 0 ] || return 1; done
}
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
same_output() { same "$1" "$2" && cmp -s "$3" "$4"; } # md5 golden file other-file
golden_md5() { cut -d' ' -f1 /vp/vectors/$1/golden/${2}_*/lead.md5 2>/dev/null | head -n1; } # cfg name
# Runs one regression loadable with the tool into DIR/output.dimg (log DIR/NAME.log) and prints
# the output's md5 (nothing without an output).
run_loadable() { # cfg loadable dir
	rm -f "$3/output.dimg"
	(cd "$3" && on $1 nvdla_runtime --backend drm --config $1 --loadable "$2") \
		>"$3/$(basename "$2" _fbuf).log" 2>&1
	md5sum "$3/output.dimg" 2>/dev/null | cut -d' ' -f1
}
clean_log() { ! dmesg | grep -E "$1"; }
# A counter of CONFIG's vp_stats (sysfs of the ivshmem device).
vp_stat() { # config name
	local node
	node=$(nvdla_vp_guest node "$1") || return 1
	sed -n "s/^$2 //p" "/sys/class/drm/${node#/dev/dri/}/device/vp_stats"
}
prefixed() { sed "s/^/$1/" "$2"; }

for m in $(cat /mod/order); do
	args=""
	[ "$m" = drm ] && [ "$MODE" = test ] && args="debug=0x2" # the validator's reasons
	insmod /mod/$m.ko $args || echo "FAIL guest: insmod $m"
done
# LIB_MODULE_MARKER (tests/kmd/lib.sh): without this line, a failure is a boot's.
echo "guest: loading nvdla.ko"
# GUEST_APPEND=NVDLA_INJECT=...: failures to test the harness with.
[ "${NVDLA_INJECT:-}" = fail ] && step "NVDLA_INJECT=fail: a check made to fail" false
step "insmod nvdla (job_timeout_ms=$JOB_TIMEOUT_MS)" insmod /mod/nvdla.ko job_timeout_ms=$JOB_TIMEOUT_MS
[ "${NVDLA_INJECT:-}" = crash ] && echo c >/proc/sysrq-trigger
step "three NVDLAs behind the host model (nv_full, nv_small, nv_large)" \
	sh -c '[ "$(dmesg | grep -c "hardware model attached")" = 3 ]'
nvdla_vp_guest info | sed 's/^/info /'
dmesg | grep -E 'mem auto-init|kfence' | sed 's/^/info memory debugging: /'

# VP_GUEST_SCRIPT of run.sh: a script of one's own instead of the checks.
if [ -f /vp/script.sh ]; then
	sh /vp/script.sh
	echo "TEST-VP-RESULT: SCRIPT ($?)"
	poweroff -f
fi

if [ "$MODE" = shell ]; then
	cat <<'EOF'

NVDLA virtual platform: nv_full, nv_small and nv_large, emulated on the host by nvdla_vp.
  nvdla_vp_guest info                           the render nodes
  on nv_full nvdla_runtime --backend drm --regression /vp/vectors/nv_full
  on nv_small nvdla_runtime --backend drm --loadable /vp/vectors/nv_small/flatbufs/CONV_D_L0_0_small_fbuf
  nvdla_vp_guest fuzz nv_full 1000              random and mutated submits
  cat /sys/class/drm/renderD128/device/vp_stats  the mailbox's counters
  dmesg                                         the kernel log
  exit                                          power off (Ctrl-A X quits QEMU)
EOF
	setsid cttyhack sh
	poweroff -f
fi

# ---- the regression loadables, through the kernel driver ------------------------
regression() { # tag: every loadable of each configuration, checked by the tool
	for cfg in nv_full nv_small; do
		[ -d /vp/vectors/$cfg ] || continue
		on $cfg nvdla_runtime --backend drm --regression /vp/vectors/$cfg >/tmp/reg.txt 2>&1
		rc=$?
		prefixed "info $cfg: " /tmp/reg.txt
		step "$cfg$1: nvdla_runtime --backend drm --regression: $(tail -n1 /tmp/reg.txt)" [ $rc = 0 ]
	done
}

fuzz() { # iterations seed: both devices at once
	half=$(($1 / 2))
	echo 0 >/sys/module/drm/parameters/debug # 10000 rejections need no reasons
	nvdla_vp_guest fuzz nv_full $half "$2" >/tmp/fuzz-full.txt 2>&1 &
	a=$!
	nvdla_vp_guest fuzz nv_small $(($1 - half)) $(($2 + 1)) >/tmp/fuzz-small.txt 2>&1 &
	b=$!
	wait $a
	ra=$?
	wait $b
	rb=$?
	cat /tmp/fuzz-full.txt /tmp/fuzz-small.txt
	step "fuzzing: $1 random and mutated submits (seed $2), valid jobs interleaved and correct" \
		zero $ra $rb
}

# The fault paths: graphs that can never run (cycles) refused; on nv_full, jobs timing out
# in the middle of their graph, and graphs with the model stalled at a random moment.
faults() { # iterations seed
	nvdla_vp_guest faults nv_full $1 $2 || fail=$((fail + 1))
	nvdla_vp_guest faults nv_small $((($1 + 3) / 4)) $(($2 + 1)) || fail=$((fail + 1))
}

# CONFIG's PCI device unbound and bound again CYCLES times while two processes run
# jobs on it for SECONDS (the last 3 s bound); they open it again after each rebind.
churn() { # config seconds cycles seed
	local node n dev drv bdf a b ra rb i=0 cycles=0 gap
	node=$(nvdla_vp_guest node $1) || { step "churn $1: the device is there" false; return; }
	n=${node#/dev/dri/}
	dev=$(readlink -f /sys/class/drm/$n/device)
	drv=$(readlink -f $dev/driver)
	bdf=${dev##*/}
	nvdla_vp_guest churn $1 $2 $4 >/tmp/churn-a.txt 2>&1 &
	a=$!
	nvdla_vp_guest churn $1 $2 $(($4 + 1)) >/tmp/churn-b.txt 2>&1 &
	b=$!
	gap=$((($2 - 3) * 10 / $3)) # tenths of a second between two rebinds
	while [ $i -lt $3 ]; do
		sleep $((gap / 10)).$((gap % 10))
		echo $bdf >$drv/unbind && sleep 0.$((i % 5 + 1)) && echo $bdf >$drv/bind &&
			cycles=$((cycles + 1))
		i=$((i + 1))
	done
	wait $a
	ra=$?
	wait $b
	rb=$?
	cat /tmp/churn-a.txt /tmp/churn-b.txt
	step "$1 unbound and bound again $cycles of $3 times under two processes' jobs" [ $cycles = $3 ]
	step "$1: both processes' jobs correct or failed by the unbind, the device back after it" \
		zero $ra $rb
}

# accel=1: the instances as compute-accelerator nodes (/dev/accel/accel*), where the
# runtime's device discovery must find them: the regression loadables on them, each
# output against its golden md5 and the bytes the render node gave.
accel_checks() {
	local cfg f name golden md5 node
	if [ ! -d /sys/class/accel ]; then
		echo "SKIP guest: the runtime on /dev/accel: this kernel has no compute-accelerator nodes (CONFIG_DRM_ACCEL, from 6.2; accel=1 would keep the render nodes)"
		return
	fi
	step "insmod nvdla accel=1" insmod /mod/nvdla.ko accel=1 job_timeout_ms=$JOB_TIMEOUT_MS
	for cfg in nv_full nv_small; do
		[ -d /vp/vectors/$cfg ] || continue
		node=$(nvdla_vp_guest node $cfg)
		step "accel=1: $cfg is an accel node, not a render node: ${node:-none}" \
			same "${node%/*}" /dev/accel
		on $cfg nvdla_runtime --backend drm --regression /vp/vectors/$cfg >/tmp/reg.txt 2>&1
		rc=$?
		prefixed "info accel $cfg: " /tmp/reg.txt
		step "$cfg on ${node#/dev/}: nvdla_runtime --backend drm --regression: $(tail -n1 /tmp/reg.txt)" \
			[ $rc = 0 ]
		mkdir -p /tmp/accel
		for f in /vp/vectors/$cfg/flatbufs/*_fbuf; do
			[ -f "$f" ] || continue
			name=$(basename "$f" _fbuf)
			golden=$(golden_md5 $cfg "$name")
			md5=$(run_loadable $cfg "$f" /tmp/accel)
			step "$cfg $name on ${node#/dev/}: output.dimg md5 ${md5:-none}, golden ${golden:-none}, the render node's bytes" \
				same_output "$md5" "$golden" /tmp/accel/output.dimg /tmp/out/$name.render.dimg
			[ -n "$md5" ] || prefixed "info accel $name: " /tmp/accel/$name.log
		done
	done
	step "rmmod nvdla (accel=1)" rmmod nvdla
	step "no leaked buffers or jobs (accel=1)" clean_log "leaked|still alive"
}

final_checks() {
	for cfg in nv_full nv_small; do
		node=$(nvdla_vp_guest node $cfg)
		echo "bench: $cfg register read round trip (spinning on the consumer index):" \
			"$(tr '\n' ' ' </sys/class/drm/${node#/dev/dri/}/device/vp_ping)"
		prefixed "info $cfg vp_stats: " /sys/class/drm/${node#/dev/dri/}/device/vp_stats
		step "$cfg: vp_ping is readable by root only (mode 400)" \
			[ "$(stat -c %a /sys/class/drm/${node#/dev/dri/}/device/vp_ping)" = 400 ]
		step "$cfg: the host model saw no access outside the carve-out, no bad ring entry" \
			zero "$(vp_stat $cfg host_outside_carveout)" "$(vp_stat $cfg host_bad_entries)"
	done
	step "rmmod nvdla" rmmod nvdla
	step "no leaked buffers or jobs" clean_log "leaked|still alive"
	# Loaded again: the driver takes over the ring where the last one left it.
	step "insmod nvdla again" insmod /mod/nvdla.ko job_timeout_ms=$JOB_TIMEOUT_MS
	for cfg in nv_full nv_small; do
		f=$(ls /vp/vectors/$cfg/flatbufs/SDP_X1_*_fbuf 2>/dev/null | head -n1)
		[ -n "$f" ] || continue
		n=$(basename "$f" _fbuf)
		golden=$(golden_md5 $cfg "$n")
		step "$cfg after reloading the module: $(basename "$f" _fbuf) matches its golden" \
			on $cfg nvdla_runtime --backend drm --config $cfg --loadable "$f" \
			--output /tmp/reload.dimg --expect-md5 "$golden"
	done
	step "rmmod nvdla" rmmod nvdla
	step "no leaked buffers or jobs after the second unload" clean_log "leaked|still alive"
	[ "$MODE" = test ] && accel_checks
	step "no kernel warning or oops" clean_log "WARNING:|BUG:|Oops|general protection|RCU stall|soft lockup"
	if [ "$fail" = 0 ]; then echo "TEST-VP-RESULT: PASS"; else echo "TEST-VP-RESULT: FAIL ($fail)"; fi
	poweroff -f
}

if [ "$MODE" = fuzz ]; then
	fuzz "$FUZZ_ITERATIONS" "$FUZZ_SEED"
	faults $((FUZZ_ITERATIONS / 1000 + 1)) "$FUZZ_SEED"
	churn nv_full 40 10 "$FUZZ_SEED"
	churn nv_small 20 5 "$FUZZ_SEED"
	regression " after fuzzing"
	final_checks
fi

regression ""

# Each output.dimg, written by the tool, against the golden md5 (busybox md5sum).
mkdir -p /tmp/out
for cfg in nv_full nv_small; do
	for f in /vp/vectors/$cfg/flatbufs/*_fbuf; do
		[ -f "$f" ] || continue
		name=$(basename "$f" _fbuf)
		golden=$(golden_md5 $cfg "$name")
		md5=$(run_loadable $cfg "$f" /tmp/out)
		step "$cfg $name: output.dimg md5 ${md5:-none}, golden ${golden:-none}" \
			same "$md5" "$golden"
		cp /tmp/out/output.dimg /tmp/out/$name.render.dimg 2>/dev/null
		same "$md5" "$golden" || prefixed "info $name: " /tmp/out/$name.log
	done
done

# The original runtime's ioctl sequence: the original compiler's loadables, a carve-out
# buffer's dma-buf taken back by its own device and refused by the other (tests/vp/orig-runtime.sh).
# shellcheck source=tests/vp/orig-runtime.sh
. /vp/orig-runtime.sh
orig_checks

# Two processes submitting to nv_full at once (nv_small busy meanwhile): each runs the
# regression three times and must match every golden every time.
loop3() { # config
	for _ in 1 2 3; do
		on $1 nvdla_runtime --backend drm --regression /vp/vectors/$1 || return 1
	done
}
loop3 nv_full >/tmp/conc-a.txt 2>&1 &
a=$!
loop3 nv_full >/tmp/conc-b.txt 2>&1 &
b=$!
loop3 nv_small >/tmp/conc-c.txt 2>&1 &
c=$!
wait $a
ra=$?
wait $b
rb=$?
wait $c
rc=$?
step "two processes submitting to nv_full at once: both correct (3 regressions each: $(grep -c ' match$' /tmp/conc-a.txt) and $(grep -c ' match$' /tmp/conc-b.txt) matches)" \
	zero $ra $rb
step "a third process on nv_small meanwhile: correct ($(grep -c ' match$' /tmp/conc-c.txt) matches)" zero $rc
zero $ra $rb $rc || prefixed "info concurrent: " /tmp/conc-a.txt

# Out-of-buffer descriptors: rejected in the guest, no register access reaches the model.
for cfg in nv_full nv_small; do
	nvdla_vp_guest reject $cfg || fail=$((fail + 1))
done
step "dmesg: the validator's reason for an out-of-buffer job" logged "job rejected .*E_EXTENT"
dmesg | grep -m 2 -E "job rejected .*E_(EXTENT|LIST)" | sed 's/^/info /'

# The fault path: the model stalls, the job times out, the engine is reset, the next job runs.
nvdla_vp_guest stall nv_full || fail=$((fail + 1))
step "dmesg: the stalled job ran longer than $JOB_TIMEOUT_MS ms and the engine was reset" \
	logged "ran longer than $JOB_TIMEOUT_MS ms: resetting the engine"
# The model stops answering: the job fails with EIO within the register-access limit.
sh /vp/model-hang.sh || fail=$((fail + $?))
faults 8 "$FUZZ_SEED"
churn nv_full 12 3 "$FUZZ_SEED"

# The ioctls one inference costs on the kernel path, buffers set up: runs of 1 and 21
# inferences under ptrace, the difference over 20.
f=/vp/vectors/nv_full/flatbufs/CONV_D_L0_0_fbuf
[ -f "$f" ] || f=$(ls /vp/vectors/nv_full/flatbufs/*_fbuf 2>/dev/null | head -n1)
if [ -n "$f" ]; then
	on nv_full nvdla_vp_guest count-ioctls nvdla_runtime --backend drm --config nv_full \
		--loadable "$f" --iterations 1 --output /tmp/b1.dimg >/tmp/b1.txt 2>&1
	on nv_full nvdla_vp_guest count-ioctls nvdla_runtime --backend drm --config nv_full \
		--loadable "$f" --iterations 21 --output /tmp/b21.dimg >/tmp/b21.txt 2>&1
	n1=$(sed -n 's/^ioctls: \([0-9]*\) drm.*/\1/p' /tmp/b1.txt)
	n21=$(sed -n 's/^ioctls: \([0-9]*\) drm.*/\1/p' /tmp/b21.txt)
	echo "bench: $(basename "$f" _fbuf) on nv_full, 1 inference: $(grep '^ioctls:' /tmp/b1.txt)"
	echo "bench: $(basename "$f" _fbuf) on nv_full, 21 inferences: $(grep '^ioctls:' /tmp/b21.txt)"
	# The same without ptrace in the way: the latency of one inference through the kernel.
	on nv_full nvdla_runtime --backend drm --config nv_full --loadable "$f" --iterations 50 \
		--output /tmp/b50.dimg 2>&1 | grep -E '^latency' | sed "s/^/bench: $(basename "$f" _fbuf) on nv_full: /"
	if [ -n "$n1" ] && [ -n "$n21" ]; then
		per=$(((n21 - n1) / 20))
		echo "bench: one inference on the kernel path costs $per ioctls once buffers are set up (($n21 - $n1) / 20)"
		step "benchmark: at most 2 ioctls per inference (one submit, one wait): $per" \
			[ $((n21 - n1)) -le 40 ]
	else
		prefixed "info bench: " /tmp/b21.txt
		step "benchmark: the ioctl count ran" false
	fi
fi

fuzz "$FUZZ_ITERATIONS" "$FUZZ_SEED"
regression " after fuzzing"
final_checks
