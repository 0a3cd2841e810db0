#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage lava: the lab definitions of labs/ proven here.
#   lava:schema:JOB         each job of labs/lava/jobs/ passes LAVA's own job
#                           schema (lava-schema.py of lava-common), and
#                           fits its device type, rendered with the
#                           device-type templates of the same LAVA version
#                           (lava-server's, scripts/lava/templates.sh)
#   lava:schema:device:DEV  the QEMU device dictionary passes the device
#                           schema
#   lava:plan               the job runs the VM plan's "lava" step (the
#                           vm stage leaves it out when this stage runs)
#   lava:kernelci:validate  what is ours in labs/kernelci/kfd.yaml and
#                           labs/lava/jobs/ (labs/kernelci/validate.py):
#                           names resolve, collections and programs in
#                           the tree, the fragments generated; broken
#                           copies rejected
#   lava:SUITE:...          the local QEMU job run with lava-run (LAVA's
#                           dispatcher, TCG) on the test kernel of
#                           $KSERIES_BUILD: every test case LAVA recorded,
#                           LAVA's verdict, every kernel splat on the
#                           console (scripts/lava/results.py)
# Logs and LAVA's output: $KSERIES_RUN/lava/ (lava.log, results.yaml,
# console.log, the job and device as run).
. "$(dirname "$0")/../lib.sh"

LABS=$KSERIES_REPO/labs
LAVA=$KSERIES_REPO/scripts/lava
JOB=$LABS/lava/jobs/qemu-x86_64-kfd-kselftest.yaml
DEVICE=$LABS/lava/devices/qemu-kfd-01.jinja2
# What the job's URLs point at; rewritten to the artifacts of this run.
URL_PREFIX=file:///srv/kseries-lava/
# LAVA's Python is Debian's (python3-yaml, jinja2, voluptuous), whatever
# python3 comes first on PATH.
PY=/usr/bin/python3
SCHEMA=/usr/share/lava-common/lava-schema.py
out=$KSERIES_RUN/lava
rm -rf "$out"
mkdir -p "$out"

work=$(scratch_dir lava) || die "no scratch directory"
# lava-run's temporary files: /var/lib/lava/dispatcher/tmp/kseries-PID-N
# (dispatcher.yaml's prefix, below), unique to this run.  When bounded
# has to SIGKILL lava-run, LAVA cannot clean up: the QEMU it started
# (pexpect puts it in a session of its own, out of reach of the kill)
# goes on running, and the directory stays.  So on exit: the processes
# whose command line has that path (QEMU's -kernel/-initrd, nothing
# else can have it), each by its id, and the directories.
lava_tmp=/var/lib/lava/dispatcher/tmp/kseries-$$-
sudo=
kill_lava_leftovers() {
	local pids pid
	pids=$(pgrep -f -- "$lava_tmp" 2>/dev/null)
	for pid in $pids; do
		[ "$pid" != "$$" ] || continue
		printf 'lava: killing %s left by lava-run: %s\n' "$pid" "$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-200)" >&2
		$sudo kill -KILL "$pid" 2>/dev/null
	done
	# shellcheck disable=SC2086
	$sudo rm -rf "$lava_tmp"* 2>/dev/null
}
cleanup() {
	kill_lava_leftovers
	rm -rf "$work"
}
trap cleanup EXIT

# --- setup: the dispatcher, LAVA's schemas, the device-type templates
if ! lava_installed || [ ! -f "$SCHEMA" ]; then
	result FAIL lava:setup "lava-dispatcher/lava-common are not installed (scripts/deps.sh)"
	exit 1
fi
if ! types=$(bash "$LAVA/templates.sh" 2>"$work/templates.log"); then
	cat "$work/templates.log" >&2
	result FAIL lava:setup "no device-type templates of lava-server $(dpkg-query -W -f='${Version}' lava-dispatcher): $(tail -n 1 "$work/templates.log")"
	exit 1
fi

# --- LAVA's schema check of every job (strict: no key LAVA does not
# know), and the job against its device type: the device rendered with
# the templates and the job's context (the QEMU job's with our dictionary,
# the lab jobs' with a dictionary that only extends their device type),
# passing the device schema, with the deploy and boot methods the job asks
# for.  The QEMU dictionary also as lava-schema.py itself renders it.
lava_ver=$(dpkg-query -W -f='${Version}' lava-dispatcher)
for job in "$LABS"/lava/jobs/*.yaml; do
	name=$(basename "$job" .yaml)
	dict=-
	[ "$job" != "$JOB" ] || dict=$DEVICE
	if ! msg=$("$PY" "$SCHEMA" job --strict "$job" 2>&1); then
		printf '%s\n' "$msg" >&2
		result FAIL "lava:schema:$name" "lava-schema.py job --strict: $(grep -v '^\* ' <<<"$msg" | head -n 3)"
	elif ! "$PY" "$LAVA/render-device.py" "$types" "$dict" "$job" >"$out/device-$name.yaml" 2>"$work/render.log"; then
		cat "$work/render.log" >&2
		result FAIL "lava:schema:$name" "valid job, but its device type: $(tail -n 1 "$work/render.log")"
	elif ! msg=$("$PY" "$SCHEMA" device --no-render "$out/device-$name.yaml" 2>&1); then
		printf '%s\n' "$msg" >&2
		result FAIL "lava:schema:$name" "valid job; its device, rendered: $(grep -v '^\* ' <<<"$msg" | head -n 3)"
	else
		result PASS "lava:schema:$name" "lava-schema.py job --strict: valid; fits device type $("$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["device_type"])' "$job") (lava-server $lava_ver templates, device schema valid)"
	fi
done
dev=$(basename "$DEVICE" .jinja2)
if [ ! -f "$out/device-$(basename "$JOB" .yaml).yaml" ]; then
	result FAIL "lava:schema:device:$dev" "the QEMU device could not be rendered (lava:schema:$(basename "$JOB" .yaml))"
	exit 1
fi
mv "$out/device-$(basename "$JOB" .yaml).yaml" "$out/device.yaml"
if msg=$("$PY" "$SCHEMA" device --path "$types" --path "$(dirname "$DEVICE")" "$DEVICE" 2>&1); then
	result PASS "lava:schema:device:$dev" "lava-schema.py device (rendered with the lava-server $lava_ver templates): valid"
else
	printf '%s\n' "$msg" >&2
	result FAIL "lava:schema:device:$dev" "lava-schema.py device: $(grep -v '^\* ' <<<"$msg" | head -n 3)"
fi

# --- the job is the VM plan's step that names it (vm.plan "lava NAME"),
# which the vm stage leaves out when this stage runs: the same command.
step=$(vm_plan | awk '$1 == "lava" { n = $2 } $1 == "kselftest" { s[$2] = $0 } END { if (n in s) print s[n] }')
job_cmd=$("$PY" -c 'import sys, yaml
for a in yaml.safe_load(open(sys.argv[1]))["actions"]:
    for d in a.get("test", {}).get("definitions", []):
        p = d.get("parameters", {})
        print("./run_kselftest.sh -c %s -o %s" % (p.get("COLLECTION"), p.get("TIMEOUT")))' "$JOB")
if [ -n "$step" ] && [ "$(cut -d' ' -f5- <<<"$step")" = "$job_cmd" ]; then
	result PASS lava:plan "the job runs the VM plan's step $(cut -d' ' -f2 <<<"$step"): $job_cmd"
else
	result FAIL lava:plan "the job runs \"$job_cmd\", the VM plan's lava step is \"${step:-none}\": the vm stage leaves that step to this job"
fi

# --- kernelci-pipeline fragment
if msg=$("$PY" "$LABS/kernelci/validate.py" --tree "$KSERIES_WORKTREE" --self-test 2>&1); then
	printf '%s\n' "$msg" >&2
	result PASS lava:kernelci:validate "$(tail -n 1 <<<"$msg")"
else
	printf '%s\n' "$msg" >&2
	result FAIL lava:kernelci:validate "$(grep -m 3 '^error' <<<"$msg" | tr '\n' ' ')"
fi

# --- the local QEMU job
stage_begin lava-artifacts
if ! bash "$LAVA/artifacts.sh" "$work/srv" >"$out/artifacts.log" 2>&1; then
	tail -n 20 "$out/artifacts.log" >&2
	result FAIL lava:artifacts "building what the job deploys failed, see $out/artifacts.log"
	exit 1
fi
# The test definitions as a git repository, from the checkout as it is
# (committed or not), as a lab would clone them.
mkdir -p "$work/testdefs/labs/lava"
cp -a "$LABS/lava/testdefs" "$work/testdefs/labs/lava/"
{
	xgit -C "$work/testdefs" init -q &&
		xgit -C "$work/testdefs" add -A &&
		GIT_AUTHOR_DATE="$BASE_DATE" GIT_COMMITTER_DATE="$BASE_DATE" \
			xgit -C "$work/testdefs" commit -q -m "kseries LAVA test definitions" &&
		xgit clone -q --bare "$work/testdefs" "$work/srv/testdefs.git"
} >>"$out/artifacts.log" 2>&1 || {
	result FAIL lava:artifacts "git repository of the test definitions failed, see $out/artifacts.log"
	exit 1
}
sed "s|$URL_PREFIX|file://$work/srv/|g" "$JOB" >"$out/job.yaml"
# lava-run's temporary files: /var/lib/lava/dispatcher/tmp/kseries-PID-1.
printf 'prefix: kseries-%s-\n' "$$" >"$out/dispatcher.yaml"
stage_end

# The job's own timeout (timeouts: job:), plus a minute for lava-run to
# report it; then it is killed.
job_s=$("$PY" -c 'import sys, yaml
t = yaml.safe_load(open(sys.argv[1]))["timeouts"]["job"]
print(t.get("hours", 0) * 3600 + t.get("minutes", 0) * 60 + t.get("seconds", 0))' "$JOB") ||
	die "no job timeout in $JOB"
# lava-run must run as root.
if [ "$(id -u)" -ne 0 ]; then
	if ! sudo -n true 2>/dev/null; then
		if [ "${KSERIES_LAVA_RUNS:-0}" = 1 ]; then
			result FAIL lava:run "sudo -n no longer works: the job was not run, and the vm stage left its step to it"
			exit 1
		fi
		result SKIP lava:run "lava-run must run as root (or with sudo without a password); the job was not run (its step runs in the vm stage of a run that has one)"
		exit 0
	fi
	sudo="sudo -n"
fi
stage_begin lava-run
printf 'lava: lava-run of %s on %s (job timeout %ss)\n' "$JOB" "$KSERIES_BUILD" "$job_s" >&2
hold_build_lock
# When this shell dies without its EXIT trap (test.sh SIGKILLed: the
# stage gets the death signal), lava-run under sudo (which drops the death
# signal) and the QEMU it started would run on: a guard of their own,
# detached and without our files, waits for this shell and then runs
# kill_lava_leftovers.
# shellcheck disable=SC2016
setsid bash -c "$(declare -f kill_lava_leftovers)"'
	for f in /proc/$BASHPID/fd/*; do n=${f##*/}; [ "$n" -le 2 ] || eval "exec $n>&-"; done
	while kill -0 "$1" 2>/dev/null; do sleep 2; done
	lava_tmp=$2 sudo=$3 kill_lava_leftovers' lava-guard "$$" "$lava_tmp" "$sudo" </dev/null >/dev/null 2>&1 &
# shellcheck disable=SC2086
bounded $((job_s + 60)) $sudo lava-run --job-id 1 --device "$out/device.yaml" --dispatcher "$out/dispatcher.yaml" \
	--output-dir "$out/output" "$out/job.yaml" >"$out/lava.log" 2>&1
rc=$?
stage_end
case $rc in
0 | 1) ;;
124) result FAIL lava:run "lava-run killed after $((job_s + 60))s (the job's timeout is ${job_s}s)" ;;
*) result FAIL lava:run "lava-run exited with status $rc, see $out/lava.log" ;;
esac
grep -E '"lvl": "(error|exception)"' "$out/lava.log" | cut -c1-400 >&2

# The programs the job was to run: its collection's in the list of the
# kselftest tree it booted.
collection=$(sed -n 's/^  kselftest.collection: //p' "$JOB")
progs=$(grep "^$collection:" "$work/srv/kselftest-list.txt" | cut -d: -f2)
# shellcheck disable=SC2086
"$PY" "$LAVA/results.py" "$out/lava.log" "$out" $progs ||
	result FAIL lava:results "scripts/lava/results.py crashed (status $?)"
