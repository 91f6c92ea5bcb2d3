#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make mutants: one-character bugs (tests/mutants/mutants.txt) compiled one at a time into a
# scratch copy of the tree; for each, the test binary that should notice is rebuilt and run.
# A mutant that the tests pass is a survivor: the tests miss that bug. Prints the survivors and
# exits 1 if there is any (or if an entry of the list is stale or does not compile).
#
# The scratch copy is $WORK/tree (the working tree's files, tracked and new), built in
# $WORK/tree/build (kept between runs). Only the affected test binary is rebuilt per mutant.
#
# Environment: WORK (default build/mutants), JOBS (2), SHARED_DIR (../shared),
# MUTANTS (a regular expression: only the entries of files matching it), TEST_TIMEOUT (600 s).
# `run.sh --check` only checks the list against the tree (each entry found once, one character),
# building nothing.
# Exit status: 0 every mutant killed, 1 otherwise.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=${WORK:-$root/build/mutants}
JOBS=${JOBS:-2}
SHARED_DIR=${SHARED_DIR:-$(cd "$root/.." && pwd)/shared}
MUTANTS=${MUTANTS:-}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
check_only=$([ "${1:-}" = --check ] && echo 1 || echo 0)
# --check works in a tree of its own, so that it may run beside a real run.
[ "$check_only" = 0 ] || WORK=$WORK/check
list=$WORK/mutants.txt # a copy: the list may be edited while this runs
tree=$WORK/tree
build=$tree/build

say() { printf 'mutants: %s\n' "$*"; }

# ---- the scratch copy ----------------------------------------------------------------
mkdir -p "$tree"
cp "$here/mutants.txt" "$list"
# The sources afresh (files deleted or renamed since the last run must not stay behind for the
# build's globs to find); the build directory stays.
find "$tree" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
(cd "$root" && git ls-files -z -co --exclude-standard |
	tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$tree" -xf -
if [ "$check_only" = 0 ] && [ ! -f "$build/build.ninja" ]; then
	say "configuring $build"
	# -O1 without debug information: quicker to compile, and without -g ccache does not hash the
	# build directory, so the cache serves the scratch tree across runs.
	cmake -S "$tree" -B "$build" -G Ninja -DNVDLA_SHARED_DIR="$SHARED_DIR" \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
		-DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DNVDLA_BUILD_BENCHMARKS=OFF >/dev/null
fi

# Applies one mutant to $tree/$file: $old must occur exactly once, and $new must differ from it
# by one character (replaced, inserted or deleted).
mutate() {
	perl -0777 -i -e '
		my ($old, $new) = (shift, shift);
		local $/; my $text = <>;
		my $count = () = $text =~ /\Q$old\E/g;
		die "occurs $count times (must be once)\n" unless $count == 1;
		my ($a, $b) = length($old) >= length($new) ? ($old, $new) : ($new, $old);
		my $i = 0;
		$i++ while $i < length($b) && substr($a, $i, 1) eq substr($b, $i, 1);
		my $rest_a = substr($a, $i + 1);
		my $rest_b = substr($b, length($a) == length($b) ? $i + 1 : $i);
		die "is not a one-character change\n"
			unless length($a) - length($b) <= 1 && $rest_a eq $rest_b && $old ne $new;
		$text =~ s/\Q$old\E/$new/;
		print $text;
	' "$1" "$2" "$tree/$3"
}

killed=0 survived=0 broken=0 equivalent=0
survivors=() broken_list=() equivalents=()
file="" target="" filter="*"
line_no=0
start=$(date +%s)
while IFS= read -r line || [ -n "$line" ]; do
	line_no=$((line_no + 1))
	case $line in
	'' | '#'*) continue ;;
	'['*)
		# [file] target [gtest filter]
		file=${line#[}
		file=${file%%]*}
		read -r target filter <<<"${line#*]}"
		filter=${filter:-*}
		continue
		;;
	esac
	[ -z "$MUTANTS" ] || [[ $file =~ $MUTANTS ]] || continue
	entry=${line%%  ## *}
	old=${entry%% ==> *}
	new=${entry#* ==> }
	id="$file:$line_no"
	if [[ $line == *'  ## equivalent: '* ]]; then
		equivalent=$((equivalent + 1))
		equivalents+=("$id: $old ==> $new (${line#*  ## equivalent: })")
		continue
	fi
	cp "$root/$file" "$tree/$file"
	if ! why=$(mutate "$old" "$new" "$file" 2>&1); then
		cp "$root/$file" "$tree/$file"
		broken=$((broken + 1))
		broken_list+=("$id: '$old' $why")
		say "BROKEN   $id: $why"
		continue
	fi
	if [ "$check_only" = 1 ]; then
		cp "$root/$file" "$tree/$file"
		killed=$((killed + 1))
		continue
	fi
	log=$WORK/$(echo "$id" | tr '/:' '__').log
	if ! cmake --build "$build" --target "$target" -j "$JOBS" >"$log" 2>&1; then
		cp "$root/$file" "$tree/$file"
		broken=$((broken + 1))
		broken_list+=("$id: '$old ==> $new' does not compile (see $log)")
		say "BROKEN   $id: does not compile ($log)"
		continue
	fi
	set +e
	NVDLA_SHARED_DIR=$SHARED_DIR timeout "$TEST_TIMEOUT" "$build/bin/$target" \
		--gtest_filter="$filter" >>"$log" 2>&1
	rc=$?
	set -e
	cp "$root/$file" "$tree/$file"
	if [ $rc = 0 ]; then
		survived=$((survived + 1))
		survivors+=("$id: $old ==> $new")
		say "SURVIVED $id: $old ==> $new"
	else
		killed=$((killed + 1))
		say "killed   $id ($target exit $rc)"
	fi
done <"$list"

if [ "$check_only" = 1 ]; then
	say "$killed entries apply, $broken broken, $equivalent equivalent"
	for b in "${broken_list[@]}"; do say "broken entry: $b"; done
	[ "$broken" = 0 ]
	exit
fi
echo
say "$killed killed, $survived survived, $broken broken, $equivalent equivalent (not run)" \
	"in $(($(date +%s) - start)) s"
for e in "${equivalents[@]}"; do say "equivalent: $e"; done
for s in "${survivors[@]}"; do say "survivor: $s"; done
for b in "${broken_list[@]}"; do say "broken entry: $b"; done
[ "$survived" = 0 ] && [ "$broken" = 0 ]
