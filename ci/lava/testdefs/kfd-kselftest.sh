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
# with a result, so every skip is preceded by a line
#   kfd-kselftest: skip PROG.CASE: REASON
# in the log (on /dev/kmsg too when the job uses lava-signal: kmsg), which
# is how the reason reaches whoever reads the results.
#
#   kfd-kselftest.sh [-p KSELFTEST_PATH] [-c COLLECTION] [-m "MODULE..."]
#
# KSELFTEST_PATH (/opt/kselftest) holds run_kselftest.sh; COLLECTION
# (drivers/gpu/amdkfd) is a directory of it.  Each MODULE is loaded first
# (modprobe, itself a test case): without udev, nothing loads amdgpu.
# Environment variables the tests read (KFD_QUEUE_HANG_ALLOW_RESET, ...)
# come from the job's "environment" (LAVA exports them to the test shell).

path=/opt/kselftest
collection=drivers/gpu/amdkfd
modules=
while getopts p:c:m: opt; do
	case $opt in
	p) path=$OPTARG ;;
	c) collection=$OPTARG ;;
	m) modules=$OPTARG ;;
	*) echo "usage: $0 [-p KSELFTEST_PATH] [-c COLLECTION] [-m MODULES]" >&2; exit 2 ;;
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

# report SET CASE RESULT [REASON]
report() {
	_name=$(case_name "$2")
	[ -n "$_name" ] || _name=unnamed
	if [ "$3" = skip ]; then
		note "kfd-kselftest: skip ${1:+$(case_name "$1").}$_name: ${4:-no reason given}"
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
# What decides whether kfd_queue_hang may hang a queue, for whoever reads
# the log.
echo "kfd-kselftest: KFD_QUEUE_HANG_ALLOW_RESET=${KFD_QUEUE_HANG_ALLOW_RESET:-(unset)}," \
	"amdgpu.cwsr_enable=$(cat /sys/module/amdgpu/parameters/cwsr_enable 2>/dev/null || echo '(no amdgpu)')"
echo "kfd-kselftest: $path/run_kselftest.sh -c $collection"
./run_kselftest.sh -c "$collection" 2>&1 | {
	prog='' skipall=''
	while IFS= read -r line; do
		printf '%s\n' "$line"
		line=${line%"$(printf '\r')"}
		case $line in
		"# selftests: "*)
			[ -z "$prog" ] || lava-test-set stop
			prog=${line##*: }
			skipall=
			lava-test-set start "$(case_name "$prog")"
			;;
		"# 1..0 # "[Ss][Kk][Ii][Pp]*)
			skipall=${line#"# 1..0 # "}; skipall=${skipall#????}; skipall=${skipall# }
			;;
		"# ok "*)
			[ -z "$prog" ] && continue
			tap_result pass "${line#"# ok "}"
			report "$prog" "$r_desc" "$r_result" "$r_reason"
			;;
		"# not ok "*)
			[ -z "$prog" ] && continue
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
				r_reason=${skipall:-${r_reason:-the program exited with KSFT_SKIP (4)}}
			fi
			report "" "$p" "$r_result" "$r_reason"
			prog='' skipall=''
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
