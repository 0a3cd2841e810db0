#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run one kselftest collection with kselftest's own runner
# (run_kselftest.sh of an installed kselftest tree, as
# "make kselftest-install" or "make kselftest-gen_tar" make it) and
# report every TAP case to LAVA:
#
#   lava-test-set start PROG                     for each test program
#   lava-test-case CASE --result pass|fail|skip  for each TAP line of it
#   lava-test-set stop
#   lava-test-case PROG --result pass|fail|skip  the program's own result
#
# "ok N name" is a pass, "not ok N name" a fail, "# SKIP reason" (either)
# a skip, "# XFAIL" a pass, "# TODO" a skip; a program that skips as a
# whole ("1..0 # SKIP reason") is one skipped case.  LAVA keeps no text
# with a result, so every skip that has a reason (a "# SKIP reason"
# directive, or the program's "1..0 # SKIP reason") is preceded by a line
#   kfd-kselftest: skip PROG.CASE: REASON
# in the log (on /dev/kmsg too when the job uses lava-signal: kmsg), which
# is how the reason reaches whoever reads the results.  A skip without a
# reason (a bare "# SKIP", a program that exits with KSFT_SKIP without
# saying why) gets no such line, and the workbench fails it
# (scripts/lava/results.py).  A failure this script decides is preceded by
#   kfd-kselftest: fail PROG: REASON
#
# A program must print its TAP plan ("1..N") and N results: one whose
# output has no plan, or fewer or more results than planned, fails even
# when it exited 0 (it crashed, or printed nothing at all).
#
#   kfd-kselftest.sh [-p KSELFTEST_PATH] [-c COLLECTION] [-m "MODULE..."]
#                    [-t SECONDS]
#
# KSELFTEST_PATH (/opt/kselftest) holds run_kselftest.sh; COLLECTION
# (drivers/gpu/amdkfd) is a directory of it.  Each MODULE is loaded first
# (modprobe, itself a test case): without udev, nothing loads amdgpu.
# SECONDS, when given, is each program's timeout instead of the
# collection's "settings" (run_kselftest.sh --override-timeout); the
# runner enforces it only where /usr/bin/timeout exists.
# Environment variables the tests read come from the job's "environment"
# (LAVA exports them to the test shell).  The runner never runs a
# TEST_GEN_PROGS_EXTENDED program (kfd_queue_hang): a lab runs those
# directly (labs/README.md).

path=/opt/kselftest
collection=drivers/gpu/amdkfd
modules=
timeout=
while getopts p:c:m:t: opt; do
	case $opt in
	p) path=$OPTARG ;;
	c) collection=$OPTARG ;;
	m) modules=$OPTARG ;;
	t) timeout=$OPTARG ;;
	*) echo "usage: $0 [-p KSELFTEST_PATH] [-c COLLECTION] [-m MODULES] [-t SECONDS]" >&2; exit 2 ;;
	esac
done

# A line that must reach the log whole: through the kernel log when LAVA
# signals through it (KMSG set), so that console output cannot split it.
note() {
	if [ -n "${KMSG:-}" ]; then
		echo "<0>$*" >/dev/kmsg
	else
		echo "$*"
	fi
}

# LAVA test case names: letters, digits, "_", "-" and "."; anything else
# becomes "_" (kfd_topology's cases are "fixture NAME").
case_name() {
	printf '%s' "$1" | tr -c 'A-Za-z0-9_.-' '_'
}

# report SET CASE RESULT [REASON]: a skip's reason is logged when there
# is one (none is made up: a skip without a reason must show as such); a
# fail's REASON is this script's own verdict.
report() {
	_name=$(case_name "$2")
	[ -n "$_name" ] || _name=unnamed
	if [ -n "$4" ]; then
		case $3 in
		skip) note "kfd-kselftest: skip ${1:+$(case_name "$1").}$_name: $4" ;;
		fail) note "kfd-kselftest: fail ${1:+$(case_name "$1").}$_name: $4" ;;
		esac
	fi
	lava-test-case "$_name" --result "$3"
	echo x >>"$counter"
}

# One TAP result line, without its "ok"/"not ok": "N description # DIRECTIVE".
# Sets r_desc, r_result, r_reason from the ok-ness ($1) and the text ($2).
tap_result() {
	r_result=$1
	_rest=$2
	# The test number.
	case $_rest in
	[0-9]*) _rest=${_rest#"${_rest%%[!0-9]*}"}; _rest=${_rest# } ;;
	esac
	r_desc=${_rest%% # *}
	r_reason=
	case $_rest in
	*" # "*) _dir=${_rest#* # } ;;
	*) _dir= ;;
	esac
	case $_dir in
	[Ss][Kk][Ii][Pp]*) r_result=skip; r_reason=${_dir#????}; r_reason=${r_reason# } ;;
	[Xx][Ff][Aa][Ii][Ll]*) r_result=pass ;;
	[Tt][Oo][Dd][Oo]*) r_result=skip; r_reason="TODO${_dir#????}" ;;
	esac
	# A failure's directive (the runner's "exit=1", "TIMEOUT 45 seconds").
	[ "$r_result" != fail ] || r_reason=$_dir
	[ -n "$r_desc" ] || r_desc=$_rest
}

if ! cd "$path" 2>/dev/null || [ ! -x ./run_kselftest.sh ]; then
	echo "kfd-kselftest: no run_kselftest.sh in $path" >&2
	lava-test-case kselftest-install --result fail
	exit 1
fi

for m in $modules; do
	lava-test-case "modprobe-$m" --shell modprobe "$m"
done

counter=$(mktemp)
echo "kfd-kselftest: $path/run_kselftest.sh -c $collection${timeout:+ -o $timeout}"
[ -x /usr/bin/timeout ] ||
	echo "kfd-kselftest: no /usr/bin/timeout: kselftest's runner runs the programs without a timeout"
./run_kselftest.sh -c "$collection" ${timeout:+-o "$timeout"} 2>&1 | {
	prog='' skipall='' plan='' seen=0
	while IFS= read -r line; do
		printf '%s\n' "$line"
		line=${line%"$(printf '\r')"}
		case $line in
		"# selftests: "*)
			[ -z "$prog" ] || lava-test-set stop
			prog=${line##*: }
			skipall='' plan='' seen=0
			lava-test-set start "$(case_name "$prog")"
			;;
		"# 1.."[0-9]*)
			[ -z "$prog" ] && continue
			plan=${line#"# 1.."}; plan=${plan%%[!0-9]*}
			case $line in
			"# 1..0 # "[Ss][Kk][Ii][Pp]*)
				skipall=${line#"# 1..0 # "}; skipall=${skipall#????}; skipall=${skipall# }
				;;
			esac
			;;
		"# ok "*)
			[ -z "$prog" ] && continue
			seen=$((seen + 1))
			tap_result pass "${line#"# ok "}"
			report "$prog" "$r_desc" "$r_result" "$r_reason"
			;;
		"# not ok "*)
			[ -z "$prog" ] && continue
			seen=$((seen + 1))
			tap_result fail "${line#"# not ok "}"
			report "$prog" "$r_desc" "$r_result" "$r_reason"
			;;
		"ok "*"selftests: "* | "not ok "*"selftests: "*)
			case $line in
			ok*) tap_result pass "${line#ok }" ;;
			*) tap_result fail "${line#not ok }" ;;
			esac
			[ -z "$prog" ] || lava-test-set stop
			p=${r_desc##*: }
			if [ "$r_result" = skip ]; then
				# Its own "1..0 # SKIP reason", else none: the runner's
				# bare "# SKIP" (exit 4) says nothing about why.
				r_reason=$skipall
			elif [ "$r_result" = pass ] && [ "$plan" = 0 ] && [ -n "$skipall" ]; then
				# "1..0 # SKIP reason" and exit 0: skipped as a whole.
				r_result=skip r_reason=$skipall
			elif [ "$r_result" = pass ] && [ -z "$plan" ]; then
				r_result=fail r_reason="exited 0 without a TAP plan (1..N): it printed no test result"
			elif [ "$r_result" = pass ] && [ "$seen" -ne "$plan" ]; then
				r_result=fail r_reason="exited 0 after $seen of its $plan planned results"
			fi
			report "" "$p" "$r_result" "$r_reason"
			prog='' skipall='' plan='' seen=0
			;;
		esac
	done
	[ -z "$prog" ] || lava-test-set stop
}
n=$(wc -l <"$counter")
rm -f "$counter"
if [ "$n" -eq 0 ]; then
	echo "kfd-kselftest: run_kselftest.sh -c $collection reported no test case" >&2
	lava-test-case "$(case_name "$collection")" --result fail
	exit 1
fi
echo "kfd-kselftest: $n test cases reported"
