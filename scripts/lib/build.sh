# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/lib.sh, part build: kernel builds, the build slot, bounded commands, verdict caches.
# Sourced by scripts/lib.sh only.

# ----------------------------------------------------------------- build
#
# make of the kernel, out of tree, as every script builds it: the same
# flags give the same objects, so ccache shares them between the test
# build and the review checkouts.  kmake TREE BUILD [make args...]; with
# LLVM=-19 among the args, clang-19 is the compiler (CC on the command
# line would otherwise override the Makefile's choice).
kmake() {
	local tree=$1 build=$2 cc="ccache gcc" a
	shift 2
	for a in "$@"; do
		case $a in LLVM=-*) cc="ccache clang${a#LLVM=}" ;; LLVM=*) cc="ccache clang" ;; esac
	done
	make -C "$tree" O="$build" ARCH=x86_64 CC="$cc" HOSTCC="$cc" \
		-j"$KSERIES_JOBS" KBUILD_BUILD_USER=kseries KBUILD_BUILD_HOST=kseries \
		KBUILD_BUILD_TIMESTAMP="$BASE_DATE" "$@" </dev/null
}

# The machine's one build slot, so that two kernel builds (or a build and
# a QEMU run) never compete for the two cores: an flock on this file.
KSERIES_LOCK=$KSERIES_CACHE/build.lock

# The processes that hold the slot, each "PID ELAPSED COMMAND": those
# with the lock file open and not waiting for it (/proc/locks), but the
# children of one (which inherit its descriptor) and this shell's own.
build_slot_holders() {
	local ino pid skip held
	ino=$(stat -c %i "$KSERIES_LOCK" 2>/dev/null) || return 0
	skip=" $$ $BASHPID $(awk -v ino="$ino" '$2 == "->" { n = split($7, d, ":"); if (d[n] == ino) printf "%s ", $6 }' /proc/locks) "
	# Every process with the file open (/proc, not fuser: psmisc is not
	# everywhere); -ef compares the files, without a fork per descriptor.
	held=" $(for f in /proc/[0-9]*/fd/*; do
		[ "$f" -ef "$KSERIES_LOCK" ] && { f=${f#/proc/}; printf '%s ' "${f%%/*}"; }
	done 2>/dev/null) "
	for pid in $held; do
		[[ $skip == *" $pid "* || $skip$held == *" $(ps -o ppid= -p "$pid" | xargs) "* ]] ||
			ps -o pid=,etime=,args= -p "$pid"
	done
}

# Hold the slot until this shell exits (fd $KSERIES_BUILD_LOCK_FD, which
# bounded closes for what it runs).  Nothing to do when it is held for us
# already: KSERIES_BUILD_LOCK_HELD=1 (scripts/test.sh holds it for its
# stages), or a lock on it inherited from the parent ("flock build.lock
# bash SCRIPT").  When it is busy, says who has it before waiting (an
# orphan keeping it would otherwise look like a silent hang).
hold_build_lock() {
	local f
	[ "${KSERIES_BUILD_LOCK_HELD:-0}" = 1 ] && return 0
	for f in /proc/"$BASHPID"/fd/*; do
		if [ "$(readlink "$f")" = "$KSERIES_LOCK" ]; then
			export KSERIES_BUILD_LOCK_HELD=1 KSERIES_BUILD_LOCK_FD=${f##*/}
			return 0
		fi
	done
	mkdir -p "$KSERIES_CACHE"
	exec {KSERIES_BUILD_LOCK_FD}>>"$KSERIES_LOCK" || die "cannot open $KSERIES_LOCK"
	if ! flock -n "$KSERIES_BUILD_LOCK_FD"; then
		{
			printf 'waiting for the build slot %s, held by:\n' "$KSERIES_LOCK"
			build_slot_holders | sed 's/^/  /'
		} >&2
		flock "$KSERIES_BUILD_LOCK_FD" || die "flock $KSERIES_LOCK failed"
	fi
	export KSERIES_BUILD_LOCK_HELD=1 KSERIES_BUILD_LOCK_FD
}

# Run a command with the slot.
with_build_lock() {
	(hold_build_lock && "$@")
}

# bounded SECONDS CMD...: run CMD and wait for it, so that it cannot be
# left behind.  It runs in a session of its own, without the slot's lock
# fd (a process that outlives the script must not keep the slot), and is
# killed when this shell dies, even by SIGKILL (PR_SET_PDEATHSIG).  Its
# whole process group is killed (TERM, then KILL BOUNDED_GRACE, default
# 10, seconds later) when SECONDS
# have passed (status 124, BOUNDED_WHY says so), when the function named
# by $BOUNDED_WATCH, called every second with the seconds elapsed, returns
# 0 (status 125; it sets BOUNDED_WHY), or when this shell gets INT, TERM
# or HUP (Ctrl-C, a closed terminal, a cancelled job), which this shell
# then dies of.  (GNU timeout in the foreground allowed none of it: it
# puts CMD in a process group of its own, out of the terminal's reach,
# and the shell handles no signal while it waits for a command.)
# BOUNDED_KEEP_LOCK=1 leaves CMD the slot's fd: for a command whose own
# children may outlive it when this shell is SIGKILLed (test.sh's stages:
# only the stage's shell gets the death signal), so that they keep the
# slot rather than run without it.  They do not for long: every bounded
# under test.sh also stops its command when test.sh (KSERIES_TOP_PID) is
# gone.  CMD gets none of the BOUNDED_ variables.
bounded() {
	local t=$1 start=$SECONDS rc='' sig
	shift
	BOUNDED_WHY=
	(
		fd=${KSERIES_BUILD_LOCK_FD:-}
		if [ -z "${BOUNDED_KEEP_LOCK:-}" ] && [ -n "$fd" ] && [ "$(readlink "/proc/$BASHPID/fd/$fd")" = "$KSERIES_LOCK" ]; then
			exec {fd}>&-
		fi
		unset KSERIES_BUILD_LOCK_FD BOUNDED_KEEP_LOCK BOUNDED_GRACE BOUNDED_WATCH
		exec setsid setpriv --pdeathsig KILL -- "$@"
	) &
	bounded_pid=$!
	for sig in INT TERM HUP; do
		# shellcheck disable=SC2064
		trap "bounded_stop; trap - $sig; kill -$sig \$BASHPID" "$sig"
	done
	while kill -0 "$bounded_pid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$t" ]; then
			BOUNDED_WHY="still running after ${t}s"
			rc=124
		elif [ -n "${BOUNDED_WATCH:-}" ] && "$BOUNDED_WATCH" $((SECONDS - start)); then
			rc=125
		elif [ -n "${KSERIES_TOP_PID:-}" ] && ! kill -0 "$KSERIES_TOP_PID" 2>/dev/null; then
			BOUNDED_WHY="the run that started it (pid $KSERIES_TOP_PID) is gone"
			rc=125
		fi
		[ -z "$rc" ] || break
		sleep 1
	done
	if [ -n "$rc" ]; then
		bounded_stop
	else
		wait "$bounded_pid"
		rc=$?
	fi
	bounded_pid=
	trap - INT TERM HUP
	return "$rc"
}

# Kill what bounded runs, its whole process group.
bounded_stop() {
	local n=0
	[ -n "${bounded_pid:-}" ] || return 0
	kill -TERM -- "-$bounded_pid" 2>/dev/null || kill -TERM "$bounded_pid" 2>/dev/null
	while kill -0 "$bounded_pid" 2>/dev/null && [ $n -lt "${BOUNDED_GRACE:-10}" ]; do
		sleep 1
		n=$((n + 1))
	done
	kill -KILL -- "-$bounded_pid" 2>/dev/null
	wait "$bounded_pid" 2>/dev/null
	bounded_pid=
}

# A build directory belongs to one base: when the base moves, its objects
# (newer than the new base's files, which keep the tarball's dates) would
# be taken as up to date.  Start it afresh then.
build_dir_for_base() {
	local base
	base=$(ktree_git rev-parse -q --verify "$KSERIES_BASE_TAG") || base=$BASE_COMMIT
	if [ -f "$1/.kseries-base" ] && [ "$(cat "$1/.kseries-base")" != "$base" ]; then
		info "$1 was built from another base; starting it afresh" >&2
		remove_owned_dir "$1"
	fi
	make_owned_dir "$1"
	printf '%s\n' "$base" >"$1/.kseries-base"
}

# sha256 of the contents of the files named on stdin, for cache keys.
hash_files() {
	local f
	while read -r f; do
		if [ -f "$f" ]; then cat "$f"; else printf 'missing\n'; fi
	done | sha256sum | cut -c1-16
}

# Verdict caches ($KSERIES_CACHE/results/): a file is a verdict only when
# it was written in full, so a full disk cannot leave an empty or cut file
# that reads as "clean".  cache_put FILE: stdin and an end line into a
# temporary file (in FILE's directory, made if need be), read back, then
# renamed to FILE; on any failure nothing
# is cached (status 1).  cache_get FILE: the verdict, without the end
# line; status 1 when there is none (a file without its end line is
# removed).
KSERIES_CACHE_END='# kseries: the verdict ends here'
cache_put() {
	local data tmp=$1.$$.tmp
	mkdir -p "$(dirname "$1")" 2>/dev/null
	data=$(
		cat
		printf x
	) && data=${data%x} &&
		(printf '%s%s\n' "$data" "$KSERIES_CACHE_END" >"$tmp") 2>/dev/null &&
		[ "$(cat "$tmp")" = "$data$KSERIES_CACHE_END" ] && mv -f "$tmp" "$1" && return 0
	rm -f "$tmp"
	printf 'kseries: could not cache a verdict in %s (disk full?); not cached\n' "$1" >&2
	return 1
}
cache_get() {
	local data
	[ -f "$1" ] && data=$(cat "$1") || return 1
	if [[ $data != *"$KSERIES_CACHE_END" ]]; then
		rm -f "$1"
		return 1
	fi
	printf '%s' "${data%"$KSERIES_CACHE_END"}"
}

# Refuse to start on a disk that cannot hold a run (a cold one fills about
# 9 GB: the trees, build directories and ccache), warn when it is tight.
# The MB free on the file system of $KSERIES_CACHE.
free_mb() {
	df -P -BM "$KSERIES_CACHE" | awk 'NR == 2 { print $4 + 0 }'
}
check_free_space() {
	local mb
	mkdir -p "$KSERIES_CACHE"
	mb=$(free_mb)
	[ -n "$mb" ] || return 0
	[ "$mb" -ge 3072 ] || die "only ${mb} MB free for $KSERIES_CACHE: a run needs several GB (a cold one about 9 GB)"
	[ "$mb" -ge 10240 ] || printf 'kseries: only %s MB free for %s; a cold run fills about 9 GB\n' "$mb" "$KSERIES_CACHE" >&2
}

# sha256 of the workbench itself (every script and config file), part of
# every verdict cache key: a change to how a check is made is a new check.
workbench_hash() {
	{
		find "$KSERIES_REPO/scripts" -type f
		ls "$KSERIES_REPO"/*/vm.plan "$KSERIES_REPO"/*/*.config
	} | LC_ALL=C sort | hash_files
}

# The test VM's plan (its format: scripts/vm/run.sh): the vm.plan of each
# part folder, in this order (amdgpu is loaded before the KFD kselftests).
vm_plan() {
	local part
	for part in drivers-gpu-drm-amd mm tools-testing-selftests; do
		cat "$KSERIES_REPO/$part/vm.plan" || return
	done
}

# Whether LAVA's dispatcher is installed.
lava_installed() {
	dpkg-query -W -f='${Status}' lava-dispatcher 2>/dev/null | grep -q 'install ok installed'
}

# Whether the local LAVA job can run here: LAVA's dispatcher is installed
# and lava-run can run as root (scripts/test.sh decides it once a run).
lava_runs() {
	lava_installed && { [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; }
}
