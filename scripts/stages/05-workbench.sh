#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage workbench: the workbench's own machinery, in seconds, on a private
# $KSERIES_CACHE (never the machine's build slot):
#   workbench:interrupt:SIG  a script holding the build slot and running a
#                            program with bounded (as scripts/vm/run.sh
#                            runs QEMU) gets SIG as a terminal or CI sends
#                            it (INT, HUP to its process group; TERM, KILL
#                            to it alone): the program is gone and the slot
#                            free at once
#   workbench:slot-holder    a script waiting for the slot names who has it
. "$(dirname "$0")/../lib.sh"

tmp=$(scratch_dir workbench) || exit 1
trap 'rm -rf "$tmp"' EXIT
lib=$KSERIES_REPO/scripts/lib.sh
# A script of the workbench's kind, on the private cache: holds the slot,
# then runs "sleep" with bounded (its pid in $tmp/child.pid).
cat >"$tmp/victim.sh" <<EOF
. "$lib"
hold_build_lock
bounded 600 bash -c 'echo \$\$ >"$tmp/child.pid"; exec sleep 600'
EOF
# Run on the private cache, with SIGINT and SIGHUP as a terminal's job has
# them (--default-signal: a background job of a script ignores SIGINT, and
# under nohup, as CI may run this, everything ignores SIGHUP).
private=(env --default-signal=INT,HUP -u KSERIES_BUILD_LOCK_HELD -u KSERIES_BUILD_LOCK_FD -u KSERIES_TOP_PID KSERIES_CACHE="$tmp/cache")
# Up to N tenths of a second for CMD to succeed.
within() {
	local n=$1
	shift
	until "$@"; do
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
		n=$((n - 1))
	done
}
gone() { ! grep -qs sleep "/proc/$1/cmdline"; }
slot_free() { flock -n "$tmp/cache/build.lock" true; }

for how in INT:group HUP:group TERM:pid KILL:pid; do
	sig=${how%:*}
	rm -f "$tmp/child.pid"
	# In a session of its own, as a terminal's foreground job.
	"${private[@]}" setsid bash "$tmp/victim.sh" </dev/null >/dev/null 2>&1 &
	victim=$!
	if ! within 100 test -s "$tmp/child.pid"; then
		result FAIL "workbench:interrupt:$sig" "the test script did not start its program"
		kill -KILL -- "-$victim" 2>/dev/null
		continue
	fi
	child=$(cat "$tmp/child.pid")
	if [ "${how#*:}" = group ]; then kill "-$sig" -- "-$victim"; else kill "-$sig" "$victim"; fi
	if within 50 gone "$child" && within 50 slot_free; then
		result PASS "workbench:interrupt:$sig" "SIG$sig to the script's ${how#*:}: its program ended and the slot is free"
	else
		result FAIL "workbench:interrupt:$sig" "SIG$sig to the script's ${how#*:}: 5 s later, program $child $(gone "$child" && echo ended || echo 'still runs'), slot $(slot_free && echo free || echo 'still held')"
		kill -KILL "$child" 2>/dev/null
	fi
	kill -KILL -- "-$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
done

# test.sh's structure: a stage (BOUNDED_KEEP_LOCK) runs a script that is
# not bounded (as 50-vm.sh runs scripts/vm/run.sh), which runs its program
# with bounded.  When test.sh is SIGKILLed only the stage's shell gets the
# death signal; the script's bounded sees test.sh (KSERIES_TOP_PID) gone
# and stops the program, and the slot is free.
cat >"$tmp/inner.sh" <<EOF
. "$lib"
hold_build_lock
bounded 600 bash -c 'echo \$\$ >"$tmp/child.pid"; exec sleep 600'
EOF
cat >"$tmp/nested.sh" <<EOF
. "$lib"
hold_build_lock
export KSERIES_TOP_PID=\$\$
BOUNDED_KEEP_LOCK=1 bounded 600 bash -c 'bash "$tmp/inner.sh"; :'
EOF
rm -f "$tmp/child.pid"
"${private[@]}" setsid bash "$tmp/nested.sh" </dev/null >/dev/null 2>&1 &
victim=$!
if within 100 test -s "$tmp/child.pid"; then
	child=$(cat "$tmp/child.pid")
	kill -KILL "$victim"
	if within 150 gone "$child" && within 150 slot_free; then
		result PASS workbench:interrupt:KILL-nested "SIGKILL to test.sh's role: the program its stage's script ran ended and the slot is free"
	else
		result FAIL workbench:interrupt:KILL-nested "SIGKILL to test.sh's role: 30 s later, the program of its stage's script $(gone "$child" && echo ended || echo 'still runs'), slot $(slot_free && echo free || echo 'still held')"
	fi
	kill -KILL "$child" 2>/dev/null
else
	result FAIL workbench:interrupt:KILL-nested "the test script did not start its program"
fi
kill -KILL -- "-$victim" 2>/dev/null
wait "$victim" 2>/dev/null

# A waiter names the holder, then gets the slot when it is released.
rm -f "$tmp/child.pid"
"${private[@]}" setsid bash "$tmp/victim.sh" </dev/null >/dev/null 2>&1 &
victim=$!
within 100 test -s "$tmp/child.pid"
"${private[@]}" bash -c ". '$lib'; hold_build_lock && echo got-slot" >"$tmp/waiter.out" 2>&1 &
waiter=$!
within 100 grep -q 'held by' "$tmp/waiter.out"
kill -TERM "$victim"
if within 100 grep -q got-slot "$tmp/waiter.out" && grep -qE "^ +$victim .*victim\.sh" "$tmp/waiter.out"; then
	result PASS workbench:slot-holder "a waiter said: $(head -n 2 "$tmp/waiter.out" | sed "s|$tmp|...|g" | tr -s ' \n' ' ')"
else
	result FAIL workbench:slot-holder "the waiter did not name the holder ($victim) or never got the slot: $(tr '\n' ' ' <"$tmp/waiter.out")"
fi
kill -KILL "$waiter" -- "-$victim" 2>/dev/null
wait 2>/dev/null

# Verdict caches on a full disk (a file size limit of 0 here: every write
# fails as it would with ENOSPC): nothing is cached, and a cut cache file
# is no verdict.
mkdir -p "$tmp/c"
(
	trap '' XFSZ
	ulimit -f 0
	printf 'PASS\tx\t\n' | cache_put "$tmp/c/full" 2>/dev/null
)
full_rc=$?
printf 'PASS\tx\t\n' | cache_put "$tmp/ok" 2>/dev/null
head -c 5 "$tmp/ok" >"$tmp/cut"
: | cache_put "$tmp/empty"
if [ $full_rc != 1 ] || [ -n "$(ls "$tmp/c")" ]; then
	result FAIL workbench:cache-full-disk "a verdict written to a full disk was cached or reported written (status $full_rc): $(ls "$tmp/c" | tr '\n' ' ')"
elif cache_get "$tmp/cut" >/dev/null || [ -e "$tmp/cut" ]; then
	result FAIL workbench:cache-full-disk "a cut cache file was read as a verdict or kept"
elif [ "$(cache_get "$tmp/ok")" != $'PASS\tx\t' ] || ! cache_get "$tmp/empty" >/dev/null || [ -n "$(cache_get "$tmp/empty")" ]; then
	result FAIL workbench:cache-full-disk "a complete verdict did not read back as written"
else
	result PASS workbench:cache-full-disk "on a full disk nothing is cached; a cut file is no verdict; complete ones (also an empty one) read back"
fi

# A patch that names a CONFIG_ symbol a later patch adds (the bisect
# stage's undefined_configs).
r=$tmp/kconfig-repo
xgit init -q "$r" && mkdir -p "$r/drivers/x" &&
	printf 'config BASE_SYM\n\tbool "base"\n' >"$r/drivers/x/Kconfig" &&
	xgit -C "$r" add -A && xgit -C "$r" commit -q -m base &&
	printf '#if IS_ENABLED(CONFIG_NEW_SYM) || defined(CONFIG_BASE_SYM_MODULE)\n#endif\n' >"$r/drivers/x/x.c" &&
	xgit -C "$r" add -A && xgit -C "$r" commit -q -m uses &&
	printf 'config NEW_SYM\n\ttristate "new"\n' >>"$r/drivers/x/Kconfig" &&
	xgit -C "$r" add -A && xgit -C "$r" commit -q -m adds
early=$(undefined_configs "$r" HEAD~1 | tr '\n' ' ')
if [ "$early" = "CONFIG_NEW_SYM " ] && [ -z "$(undefined_configs "$r" HEAD)" ]; then
	result PASS workbench:bisect-config "a patch naming CONFIG_NEW_SYM before the patch adding it is caught; at the later commit it is not"
else
	result FAIL workbench:bisect-config "undefined at the using commit: '$early' (want CONFIG_NEW_SYM), at the defining one: '$(undefined_configs "$r" HEAD | tr '\n' ' ')'"
fi
