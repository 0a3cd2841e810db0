# SPDX-License-Identifier: GPL-2.0
# Shared definitions of the workbench scripts.  Source it, do not run it.
#
# Everything the scripts create lives outside the repository, under
# $KSERIES_CACHE (default ~/.cache/kseries), and carries an ownership
# marker; nothing else is ever deleted or reset:
#   dl/       downloaded Debian packages and the private apt state
#   linux/    the developer's kernel work tree (tag kseries-base, branch
#             series), $KSERIES_WORKTREE
#   build/    its O= build directory, $KSERIES_BUILD
#   run/      logs and results of the last run, $KSERIES_RUN
#   ci/       the same three for scripts/test.sh, which never uses the
#             developer's tree (disposable: replaced when the base moves)
#   scratch/  short-lived git repositories and sparse worktrees

set -o pipefail

# The tools come from Debian's packages (scripts/deps.sh): put the system
# directories first, ahead of any pyenv or /usr/local shadowing them (the
# kernel's Python scripts need Debian's python3-ply, for instance).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export LC_ALL=C.UTF-8
# LANGUAGE outranks LC_ALL for gettext: git, make and gcc would speak
# another language, and the parsers of their messages would see nothing.
unset LANGUAGE
export PYTHONDONTWRITEBYTECODE=1

# The two old names of the trees were easy to mix up: one is only read,
# the other may be reset.  Refuse them instead of guessing.
[ -z "${KERNEL_TREE:-}" ] || {
	echo "error: KERNEL_TREE is now KSERIES_IMPORT_FROM (a kernel git tree at the base, only read)" >&2
	exit 1
}
[ -z "${KSERIES_TREE:-}" ] || {
	echo "error: KSERIES_TREE is now KSERIES_WORKTREE (the work tree the scripts own and may reset)" >&2
	exit 1
}

# git environment that would point the scripts' git at another repository,
# index or configuration (a git hook exports some of these).
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR \
	GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_CONFIG GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT \
	GIT_NAMESPACE GIT_CEILING_DIRECTORIES \
	GIT_DIFF_OPTS GIT_EXTERNAL_DIFF GIT_TEMPLATE_DIR GIT_ATTR_SOURCE GIT_DIFF_PATH_COUNTER \
	GIT_DIFF_PATH_TOTAL GIT_NOTES_REF GIT_REPLACE_REF_BASE GIT_NO_REPLACE_OBJECTS \
	GIT_QUARANTINE_PATH GIT_SHALLOW_FILE GIT_GRAFT_FILE

# Every path canonical (kbuild writes real absolute paths into its command
# files, and the checks rewrite them from one tree to another).
KSERIES_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
KSERIES_CACHE=$(realpath -m "${KSERIES_CACHE:-$HOME/.cache/kseries}")
KSERIES_WORKTREE=$(realpath -m "${KSERIES_WORKTREE:-$KSERIES_CACHE/linux}")
KSERIES_BUILD=$(realpath -m "${KSERIES_BUILD:-$KSERIES_CACHE/build}")
KSERIES_RUN=$(realpath -m "${KSERIES_RUN:-$KSERIES_CACHE/run}")
KSERIES_JOBS=${KSERIES_JOBS:-$(nproc)}
KSERIES_SCRATCH=$KSERIES_CACHE/scratch
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
# Objects are identical whatever the build directory is called.
export CCACHE_BASEDIR=$KSERIES_CACHE
export CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-time_macros,include_file_mtime,include_file_ctime}

KSERIES_BASE_TAG=kseries-base
KSERIES_BRANCH=series
# The marker that makes a directory the workbench's own (see owned_dir).
KSERIES_MARKER=.kseries-owned
# The identity of the base import and of the workbench's own commits:
# fixed, so that commit ids do not depend on who runs the scripts or when.
KSERIES_BOT_NAME="kseries workbench"
KSERIES_BOT_EMAIL="workbench@kseries.invalid"
KSERIES_BASE_NAME="Debian linux-source import"
# The project's own identity, the author of the patches it wrote: not a
# person, so send.sh puts the human sender in its place (and lint checks
# that each patch has its author's Signed-off-by, whoever that is).
KSERIES_PROJECT_IDENT="Seed 824ecc77 maintainers <maintainers@users.noreply.a-seed-824ecc77.example>"
KSERIES_BASE_EMAIL="base@kseries.invalid"

# The series as files.
KSERIES_SERIES=$KSERIES_REPO/series
KSERIES_PATCHES=$KSERIES_REPO/patches
KSERIES_POSTINGS_CONF=$KSERIES_REPO/scripts/postings.conf

# (Status 2: scripts/test.sh tells a stage that stopped on an error, its
# results possibly incomplete, from one that reported its failures.)
die() {
	printf 'error: %s\n' "$*" >&2
	exit 2
}

warn() {
	printf 'warning: %s\n' "$*" >&2
}

info() {
	printf '%s\n' "$*"
}

# A result line of a stage: STATUS<TAB>NAME<TAB>DETAIL on stdout, the
# format scripts/test.sh collects (STATUS is PASS, FAIL or SKIP).
result() {
	local detail=${3:-}
	printf '%s\t%s\t%s\n' "$1" "$2" "${detail//$'\n'/ }"
}

# Read scripts/base.conf into BASE_* variables (plain KEY=value lines).
load_base_conf() {
	local key val
	while IFS='=' read -r key val; do
		case $key in
		BASE_[A-Z0-9_]*) printf -v "$key" '%s' "$val" ;;
		esac
	done < <(grep -E '^BASE_[A-Z0-9_]*=' "$KSERIES_REPO/scripts/base.conf")
}
load_base_conf

# Stage timing: stage_begin NAME ... stage_end.  Each stage's wall time
# is printed when it ends and appended to $KSERIES_TIMES.
KSERIES_TIMES=${KSERIES_TIMES:-}
stage_begin() {
	KSERIES_STAGE=$1
	KSERIES_STAGE_T0=$(date +%s.%N)
	printf '==> %s\n' "$KSERIES_STAGE" >&2
}

stage_end() {
	local t1 dt
	t1=$(date +%s.%N)
	dt=$(awk -v a="$KSERIES_STAGE_T0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	printf '<== %s: %ss\n' "$KSERIES_STAGE" "$dt" >&2
	if [ -n "$KSERIES_TIMES" ]; then
		printf '%-28s %8ss\n' "$KSERIES_STAGE" "$dt" >>"$KSERIES_TIMES"
	fi
}

# ---------------------------------------------------------------- series
#
# series lists the postings in the order they apply, each a "[name]"
# line followed by its patch files (patches/name/NNNN-*.patch, next to
# the posting's 0000-cover-letter.patch).

# "posting<TAB>file" for every patch, in order.
series_entries() {
	awk '/^[[:space:]]*(#|$)/ { next }
		/^\[[a-z0-9-]+\]$/ { p = substr($0, 2, length($0) - 2); next }
		{ if (p == "") { print "series: patch before any [posting] line: " $0 > "/dev/stderr"; exit 1 }
		  printf "%s\t%s\n", p, $1 }' "$KSERIES_SERIES"
}

# The patch files, relative to patches/, in order.
series_patches() {
	series_entries | awk -F'\t' '{ print $1 "/" $2 }'
}

# The postings, in order.
series_postings() {
	series_entries | cut -f1 | awk '!seen[$0]++'
}

# The patch files of one posting, relative to patches/.
posting_patches() {
	series_entries | awk -F'\t' -v p="$1" '$1 == p { print $1 "/" $2 }'
}

cover_letter() {
	printf '%s\n' "$KSERIES_PATCHES/$1/0000-cover-letter.patch"
}

# Postings as scripts/postings.conf defines them: "name<TAB>prefix<TAB>
# regex" lines, in posting order.  A commit goes to the first posting
# whose regex matches the start of its subject.
postings_conf() {
	sed -n -E 's/^([a-z0-9-]+)[[:space:]]+\[([^]]+)\][[:space:]]+(.*[^[:space:]])[[:space:]]*$/\1\t\2\t\3/p' \
		"$KSERIES_POSTINGS_CONF"
}

# The posting of a subject line, or nothing (status 1).
posting_of_subject() {
	local subject=$1 name prefix re
	while IFS=$'\t' read -r name prefix re; do
		if grep -qE "^($re)" <<<"$subject"; then
			printf '%s\n' "$name"
			return 0
		fi
	done < <(postings_conf)
	return 1
}

# The subject prefix of a posting ("PATCH", "PATCH RFT").
posting_prefix() {
	postings_conf | awk -F'\t' -v p="$1" '$1 == p { print $2 }'
}

# ----------------------------------------------------------- Debian apt
#
# Downloads from the machine's Debian archive with a private apt state in
# $KSERIES_DL: the system's apt configuration is not touched.
KSERIES_DL=$KSERIES_CACHE/dl

# The URI of the machine's Debian archive, from its apt sources (deb822
# or one-line format), skipping security and third-party archives.
debian_archive_uri() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk -v RS= '
			/(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[^\n]*(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable)/ &&
			!/(^|\n)Suites:[^\n]*-security/ && /debian-archive-keyring|(^|\n)URIs:[^\n]*\/debian\/?(\n|$)/ {
				if (match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) {
					s = substr($0, RSTART, RLENGTH); sub(/^\n?URIs:[ \t]*/, "", s); print s; exit
				}
			}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) !~ /-security/ && $(i + 1) ~ /^(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable)/) { print $i; exit }
		}' "$f"
	done
}

# apt with the private state in $KSERIES_DL: apt_private TYPES CMD ARGS...
# (TYPES "deb" or "deb-src").
apt_private() {
	local cmd=$2 dir=$KSERIES_DL/apt-${1}
	apt_private_sources "$1"
	shift 2
	"$cmd" -o Dir::Etc::SourceList="$dir/sources.list" \
		-o Dir::Etc::SourceParts="$dir/sources.list.d" \
		-o Dir::State::Lists="$dir/lists" \
		-o Dir::Cache="$dir/cache" \
		-o Debug::NoLocking=1 \
		${KSERIES_APT_SANDBOX:+-o APT::Sandbox::User="$KSERIES_APT_SANDBOX"} "$@"
}

# The private source list of TYPES, for the base's suite.
apt_private_sources() {
	local types=$1 uri dir=$KSERIES_DL/apt-${1} want
	uri=$(debian_archive_uri | head -n 1)
	[ -n "$uri" ] || die "no Debian archive found in the apt sources of this machine"
	want=$(printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$types" "$uri" "$BASE_SUITE" /usr/share/keyrings/debian-archive-keyring.gpg)
	# Written again when the base's suite or the machine's archive
	# changes; the lists of another source are dropped with the stamp.
	if [ "$(cat "$dir/sources.list.d/kseries.sources" 2>/dev/null)" != "$want" ]; then
		rm -rf "$dir"
		mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial"
		: >"$dir/sources.list"
		printf '%s\n' "$want" >"$dir/sources.list.d/kseries.sources"
	fi
}
[ "$(id -u)" -ne 0 ] || KSERIES_APT_SANDBOX=root

# apt-get update of the private list, at most once an hour.
apt_private_update() {
	local stamp=$KSERIES_DL/apt-$1/updated
	apt_private_sources "$1"
	[ -n "$(find "$stamp" -mmin -60 2>/dev/null)" ] && return 0
	apt_private "$1" apt-get -qq update >&2 || die "apt-get update of $BASE_SUITE ($1) failed"
	touch "$stamp"
}

# ------------------------------------------------------------------- git
#
# git as the scripts run it: no user or system configuration (so results
# do not depend on who runs them) and the workbench's fixed identity for
# the commits the scripts make.  (The cover letters and send.sh say whose
# identity they need through KSERIES_GIT_NAME/KSERIES_GIT_EMAIL.)
xgit() {
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
		GIT_AUTHOR_NAME=${KSERIES_GIT_NAME:-$KSERIES_BOT_NAME} \
		GIT_AUTHOR_EMAIL=${KSERIES_GIT_EMAIL:-$KSERIES_BOT_EMAIL} \
		GIT_COMMITTER_NAME=${KSERIES_GIT_NAME:-$KSERIES_BOT_NAME} \
		GIT_COMMITTER_EMAIL=${KSERIES_GIT_EMAIL:-$KSERIES_BOT_EMAIL} \
		git "$@"
}

# git in the kernel work tree.
ktree_git() {
	xgit -C "$KSERIES_WORKTREE" "$@"
}

# ---------------------------------------------------- owned directories
#
# The scripts delete or reset only directories they created: those with
# the marker file (at the top, or in .git/ for a git tree), or missing
# ones.  Trees that earlier versions of the scripts made without a marker
# count only if they are where those put them (the work trees and build
# directories under $KSERIES_CACHE) and are what they made.  Anything
# else (a user's own kernel tree named by mistake) is refused.
owned_dir() {
	local real
	[ -e "$1" ] || return 0
	[ ! -f "$1/$KSERIES_MARKER" ] && [ ! -f "$1/.git/$KSERIES_MARKER" ] || return 0
	real=$(realpath -m "$1")
	case $real in
	"$KSERIES_CACHE"/linux | "$KSERIES_CACHE"/ci/linux)
		git -C "$real" rev-parse -q --verify "refs/tags/$KSERIES_BASE_TAG" >/dev/null 2>&1 ;;
	"$KSERIES_CACHE"/build | "$KSERIES_CACHE"/ci/build | "$KSERIES_CACHE"/review | "$KSERIES_CACHE"/ci/review | \
		"$KSERIES_CACHE"/review/* | "$KSERIES_CACHE"/ci/review/* | "$KSERIES_CACHE"/run | "$KSERIES_CACHE"/ci/run | \
		"$KSERIES_CACHE"/scratch | "$KSERIES_CACHE"/send | "$KSERIES_CACHE"/send/*)
		return 0 ;;
	*) return 1 ;;
	esac
}

# mkdir a directory the workbench owns; an existing one must be its own
# already (it never adopts a directory it did not make).
make_owned_dir() {
	if [ -e "$1" ] && [ -n "$(ls -A "$1" 2>/dev/null)" ]; then
		owned_dir "$1" || die "$1 exists and the workbench did not create it; refusing to use it"
	fi
	mkdir -p "$1" && touch "$1/$KSERIES_MARKER"
}

# scripts/test.sh's own tree, which may be replaced or reset whatever it
# holds (KSERIES_DISPOSABLE=1, which test.sh sets, counts for it only).
disposable_tree() {
	[ "${KSERIES_DISPOSABLE:-0}" = 1 ] && [ "$KSERIES_WORKTREE" = "$KSERIES_CACHE/ci/linux" ]
}

# Mark a git tree the workbench created (the marker in .git/, where
# neither git status nor the kernel's own files see it).
mark_owned_tree() {
	touch "$1/.git/$KSERIES_MARKER"
}

# rm -rf a directory, only if the workbench owns it.
remove_owned_dir() {
	owned_dir "$1" || die "refusing to delete $1: the workbench did not create it (no $KSERIES_MARKER)"
	rm -rf "$1"
}

# A scratch directory, removed at exit by the caller's trap.
scratch_dir() {
	make_owned_dir "$KSERIES_SCRATCH"
	mktemp -d "$KSERIES_SCRATCH/$1.XXXXXX"
}

# A worktree of the work tree's repository at commit $2, in directory $1,
# with only the paths read from stdin checked out (b4 needs a checkout,
# of a few files).
sparse_worktree() {
	local dir=$1 rev=$2
	ktree_git worktree add -q --no-checkout --detach "$dir" "$rev" >/dev/null || return 1
	xgit -C "$dir" sparse-checkout set --no-cone --stdin || return 1
	xgit -C "$dir" checkout -q --detach "$rev"
}

# The paths patch files (or mbox files) touch, as sparse-checkout
# patterns.
patch_paths() {
	grep -h '^diff --git a/' "$@" | sed -E 's#^diff --git a/(.*) b/(.*)$#/\1\n/\2#' | sort -u
}

# "ID PATH" for every file the series touches: ID is the blob the file
# has at the base, as the first patch that touches it names it (its index
# line, 12 hex digits), or "new" for a file the series creates.  Each
# posting applies alone on the base, so every first touch is the base's.
base_blobs() {
	local p
	series_patches | while read -r p; do
		awk '/^diff --git a\// { path = substr($3, 3); next }
			path != "" && /^new file mode/ { print "new", path; path = ""; next }
			path != "" && /^index [0-9a-f]+\.\./ { split($2, id, "."); print id[1], path; path = "" }' \
			"$KSERIES_PATCHES/$p"
	done | awk '!seen[$2]++'
}

# base_differs GIT_DIR TREE: the files the series touches that TREE does
# not have as the base has them (base_blobs); nothing when TREE can stand
# in for the base.
base_differs() {
	local id path have
	while read -r id path; do
		have=$(xgit -C "$1" rev-parse -q --verify "$2:$path" 2>/dev/null)
		if [ "$id" = new ]; then
			[ -z "$have" ] || printf '%s (the series creates it)\n' "$path"
		elif [[ $have != "$id"* ]]; then
			printf '%s\n' "$path"
		fi
	done < <(base_blobs)
}

# git am of mbox/patch files on REV in a scratch repository of its own
# (its configuration is empty, whatever the work tree's repository says),
# borrowing the work tree's objects, with only the paths the files touch
# checked out (seconds, not minutes).  The resulting commits are fetched
# into the work tree's repository; prints the last one.  git am's output
# goes to LOG.
#   [AM_OPTS=...] am_on REV LOG FILE...   (AM_OPTS default: --no-3way:
#   the scratch repository borrows every object of the work tree, so a
#   three-way merge could succeed here where a maintainer's git am fails)
am_on() {
	local rev=$1 log=$2 wt rc=0 tip
	shift 2
	[ $# -gt 0 ] || { echo "am_on: no patch files" >"$log"; return 1; }
	wt=$(scratch_dir am) || return 1
	{
		xgit init -q "$wt/repo" &&
			printf '%s\n' "$(ktree_git rev-parse --path-format=absolute --git-common-dir)/objects" \
				>"$wt/repo/.git/objects/info/alternates" &&
			patch_paths "$@" | xgit -C "$wt/repo" sparse-checkout set --no-cone --stdin &&
			xgit -C "$wt/repo" checkout -q --detach "$rev"
	} >"$log" 2>&1 || { rm -rf "$wt"; return 1; }
	# shellcheck disable=SC2086
	if xgit -C "$wt/repo" am --committer-date-is-author-date ${AM_OPTS:---no-3way} "$@" >>"$log" 2>&1 &&
		tip=$(xgit -C "$wt/repo" rev-parse HEAD) &&
		ktree_git fetch -q --no-tags "$wt/repo" "$tip" >>"$log" 2>&1; then
		printf '%s\n' "$tip"
	else
		rc=1
	fi
	rm -rf "$wt"
	return $rc
}

remove_worktree() {
	[ -e "$1" ] || return 0
	ktree_git worktree remove --force "$1" >/dev/null 2>&1 || rm -rf "$1"
	ktree_git worktree prune
}

# kselftest_make TREE DIR OUT PROG [VAR=value...]: build the kselftest
# program PROG of tools/testing/selftests/DIR in TREE into OUT/PROG with
# DIR's Makefile, against the test build's UAPI headers.
kselftest_make() {
	local tree=$1 dir=$2 out=$3 prog=$4
	shift 4
	make -s -C "$tree/tools/testing/selftests/$dir" OUTPUT="$out" CC="ccache gcc" \
		KHDR_INCLUDES="-isystem $KSERIES_BUILD/usr/include" "$@" "$out/$prog"
}

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
# slot rather than run without it.
bounded() {
	local t=$1 start=$SECONDS rc='' sig
	shift
	BOUNDED_WHY=
	(
		fd=${KSERIES_BUILD_LOCK_FD:-}
		if [ -z "${BOUNDED_KEEP_LOCK:-}" ] && [ -n "$fd" ] && [ "$(readlink "/proc/$BASHPID/fd/$fd")" = "$KSERIES_LOCK" ]; then
			exec {fd}>&-
		fi
		unset KSERIES_BUILD_LOCK_FD
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
# temporary file, read back, then renamed to FILE; on any failure nothing
# is cached (status 1).  cache_get FILE: the verdict, without the end
# line; status 1 when there is none (a file without its end line is
# removed).
KSERIES_CACHE_END='# kseries: the verdict ends here'
cache_put() {
	local data tmp=$1.$$.tmp
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
check_free_space() {
	local mb
	mkdir -p "$KSERIES_CACHE"
	mb=$(df -P -BM "$KSERIES_CACHE" | awk 'NR == 2 { print $4 + 0 }')
	[ -n "$mb" ] || return 0
	[ "$mb" -ge 3072 ] || die "only ${mb} MB free for $KSERIES_CACHE: a run needs several GB (a cold one about 9 GB)"
	[ "$mb" -ge 10240 ] || printf 'kseries: only %s MB free for %s; a cold run fills about 9 GB\n' "$mb" "$KSERIES_CACHE" >&2
}

# sha256 of the workbench itself (every script and config file), part of
# every verdict cache key: a change to how a check is made is a new check.
workbench_hash() {
	find "$KSERIES_REPO/scripts" -type f | LC_ALL=C sort | hash_files
}

# ---------------------------------------------------------------- review
#
# The review checkout: a second, detached worktree of the work tree's
# repository, $KSERIES_REVIEW/linux, where the bisect, static and review
# checks check out one commit after another (only changed files are
# rewritten, so kbuild rebuilds only what they reach), with build
# directories of its own beside it.  A checkout left pointing into a
# repository that was replaced (a base bump) is recreated.
KSERIES_REVIEW=${KSERIES_REVIEW:-$(dirname "$KSERIES_WORKTREE")/review}
REVIEW_TREE=$KSERIES_REVIEW/linux

rgit() { xgit -C "$REVIEW_TREE" "$@"; }

review_checkout() {
	local common
	common=$(rgit rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
	if [ -z "$common" ] || [ "$common" != "$(ktree_git rev-parse --path-format=absolute --git-common-dir)" ]; then
		[ ! -e "$REVIEW_TREE" ] || info "review: recreating $REVIEW_TREE (not a worktree of $KSERIES_WORKTREE)" >&2
		remove_owned_dir "$REVIEW_TREE"
		ktree_git worktree prune
		make_owned_dir "$KSERIES_REVIEW"
		ktree_git worktree add -q --detach "$REVIEW_TREE" "$1" >&2 || die "git worktree add $REVIEW_TREE failed"
		# The marker at the top (Debian's /* .gitignore hides it from git).
		touch "$REVIEW_TREE/$KSERIES_MARKER"
	fi
	rgit checkout -q -f --detach "$1" || die "checkout of $1 in $REVIEW_TREE failed"
}

# Configure a build directory of the review checkout for the commit
# checked out there: the test kernel's .config, then olddefconfig at this
# tree (an option the series adds does not exist at the base), every time,
# so the result never depends on where it was configured last.
#   review_configure DIR [make args...] (e.g. LLVM=-19)
review_configure() {
	local dir=$1 a
	shift
	[ -f "$KSERIES_BUILD/.config" ] || die "no $KSERIES_BUILD/.config: build the series first (build-kernel.sh)"
	build_dir_for_base "$dir"
	cp "$KSERIES_BUILD/.config" "$dir/.config"
	kmake "$REVIEW_TREE" "$dir" -s "$@" olddefconfig >&2 || die "make olddefconfig in $dir failed"
	for a in "$@"; do
		case $a in
		LLVM=*) grep -qx 'CONFIG_CC_IS_CLANG=y' "$dir/.config" || die "$dir: LLVM build is not configured for clang" ;;
		esac
	done
}

# Of the objects named, those missing from build directory $1 (a build
# that "succeeded" without producing them checked nothing).
missing_objs() {
	local dir=$1 o
	shift
	for o in "$@"; do [ -f "$dir/$o" ] || printf '%s ' "$o"; done
}

# The kbuild target of a kernel .c file.  amdkfd is built by amdgpu's
# Makefile (AMDKFD_PATH := ../amdkfd), so its objects are named from there.
obj_of() {
	case $1 in
	drivers/gpu/drm/amd/amdkfd/*) echo "drivers/gpu/drm/amd/amdgpu/../amdkfd/$(basename "${1%.c}").o" ;;
	*) echo "${1%.c}.o" ;;
	esac
}

# Kernel .c files of a file list (stdin): not tools/, scripts/, Documentation/.
kernel_c() { grep -E '\.c$' | grep -vE '^(tools|scripts|Documentation|samples)/' || true; }

# undefined_configs GIT_DIR COMMIT: the CONFIG_ symbols that COMMIT's
# added lines (C, headers, Makefiles, Kconfig) name and no Kconfig of
# that commit defines.  The bisect stage compiles with the tip's config,
# so a patch using a symbol that a later patch adds would still build.
undefined_configs() {
	local s
	for s in $(xgit -C "$1" diff-tree -p --no-commit-id "$2^" "$2" -- '*.c' '*.h' '*Makefile' '*Kbuild' '*Kconfig*' ':!tools/' |
		grep -E '^\+' | grep -vE '^\+\+\+ ' | grep -oE '\bCONFIG_[A-Z0-9_]+' | sed 's/_MODULE$//' | sort -u); do
		xgit -C "$1" grep -qE "^[[:space:]]*(menu)?config ${s#CONFIG_}[[:space:]]*\$" "$2" -- '*Kconfig*' ||
			printf '%s\n' "$s"
	done
}

# Pack the work tree repository's loose objects once there are many: an
# import or a few series applications leave tens of thousands of files.
# Automatic gc is off there (git would start it in the background, under
# the stages); this is git gc --auto in the foreground, from 20,000 loose
# objects, without delta search (one pack quickly); it also prunes
# unreachable objects after git's usual two weeks.
pack_loose_objects() {
	ktree_git -c gc.auto=20000 -c gc.autoDetach=false -c pack.window=0 gc --auto --quiet ||
		die "git gc --auto in $KSERIES_WORKTREE failed"
}

# base_import_commit TREE VERSION KERNELVERSION SHA256 DATE: the commit
# that imports TREE, $BASE_PACKAGE VERSION, as the base, with fixed
# metadata, so that its id is the same on every machine (xgit takes the
# identity from KSERIES_GIT_*, never from GIT_AUTHOR_*).
base_import_commit() {
	KSERIES_GIT_NAME="$KSERIES_BASE_NAME" KSERIES_GIT_EMAIL="$KSERIES_BASE_EMAIL" \
		GIT_AUTHOR_DATE="$5" GIT_COMMITTER_DATE="$5" \
		ktree_git commit-tree "$1" -m "Import $BASE_PACKAGE $2" \
		-m "Linux $3 as shipped in Debian's $BASE_PACKAGE $2 ($BASE_SUITE), $BASE_TARBALL, sha256 $4."
}

# Files a commit touches (added, modified or renamed; not deleted).
commit_files() { ktree_git diff-tree --no-commit-id -r --name-only --diff-filter=AMR "$1^" "$1"; }

# Every file the commits base..tip touch.
series_files() { ktree_git diff --name-only --diff-filter=AMR "$1" "$2"; }

# The objects the last build of $KSERIES_BUILD linked: the members of
# vmlinux.a and the objects of every module in modules.order (both
# rewritten by kbuild at each build; a .cmd file can outlive its option).
built_objs() {
	(
		cd "$KSERIES_BUILD" || exit 1
		ar t vmlinux.a || exit 1
		sed 's/\.o$/.mod/' modules.order | xargs -r cat
	) 2>/dev/null | sort -u
}

# The .c files of the series that the test kernel builds: the others are
# not compiled by any check.
built_c() {
	local f objs
	objs=$(built_objs)
	while read -r f; do
		grep -qxF "$(obj_of "$f")" <<<"$objs" && printf '%s\n' "$f"
	done
}

# Warnings of a build log, normalized: "path: text" without line:column,
# paths relative to the tree, then counted ("N path: warning: text").
norm_warnings() {
	local tree=$1 build=$2 rel
	rel=$(realpath -m --relative-to="$build" "$tree")
	sed -n -e "s|$tree/||g" -e "s|^$rel/||" \
		-e 's/^\([^ :]*\):[0-9]*:[0-9]*: \(warning\|error\): /\1: \2: /p' \
		-e 's/^\([^ :]*\):[0-9]*: \(warning\|error\): /\1: \2: /p' |
		sort | uniq -c | sed 's/^ *//'
}

# Lines of count list $2 with a count above what list $1 has.
new_lines() {
	awk 'FILENAME == ARGV[1] { n = $1; $1 = ""; have[$0] = n; next }
		{ n = $1; $1 = ""; if (n > have[$0] + 0) printf "%d x%s\n", n - have[$0], $0 }' "$1" "$2"
}

# kernel-doc -none of files (paths in the review tree), normalized and
# counted like norm_warnings.  kernel-doc exits 0 whatever it finds; its
# output is warnings only ("file:line: warning: ..." or "Warning: ..."):
# a non-zero exit or any other line is kernel-doc failing, and fails this.
kdoc() {
	local f out raw=
	for f in "$@"; do
		[ -f "$REVIEW_TREE/$f" ] || continue
		out=$(cd "$REVIEW_TREE" && python3 scripts/kernel-doc -none "$f" 2>&1) || {
			printf 'kernel-doc failed on %s (status %s): %s\n' "$f" "$?" "$(tail -n 1 <<<"$out")" >&2
			return 1
		}
		raw+=$out$'\n'
	done
	# A warning may go on over indented lines (the comment it quotes).
	if grep -v '^$' <<<"$raw" | grep -qviE '(^warning: |: warning: |^[[:space:]])'; then
		printf 'kernel-doc failed: %s\n' "$(grep -v '^$' <<<"$raw" | grep -viE '(^warning: |: warning: |^[[:space:]])' | head -n 1)" >&2
		return 1
	fi
	awk '/^$/ { next } /^[[:space:]]/ { w = w " |" $0; next } { if (w != "") print w; w = $0 } END { if (w != "") print w }' <<<"$raw" |
		sed -e 's/^\(Warning\|warning\|WARNING\): *//' -e 's/:[0-9]\+\( \|:\)/\1/' |
		sort | uniq -c | sed 's/^ *//'
	return 0
}

# The .c and .h files of a file list (stdin) that kernel-doc reads.
kdoc_files() { grep -E '\.(c|h)$' | grep -vE '^(tools|scripts|samples)/' || true; }

# The subject and text of a cover letter (everything above its shortlog),
# the form git format-patch --cover-from-description=subject takes back.
cover_description() {
	[ -f "$1" ] || return 0
	awk '
		!hdr_done && /^Subject: / { subj = $0; sub(/^Subject: *(\[[^]]*\] *)?/, "", subj); insubj = 1; next }
		!hdr_done && insubj && /^[ \t]/ { s = $0; sub(/^[ \t]+/, " ", s); subj = subj s; next }
		!hdr_done && /^$/ { hdr_done = 1; printf "%s\n\n", subj; next }
		!hdr_done { insubj = 0; next }
		/^[^ \t].* \([0-9]+\):$/ { exit }
		{ body[++n] = $0 }
		END {
			while (n > 0 && body[n] == "") n--
			for (i = 1; i <= n; i++) print body[i]
		}' "$1"
}

# "Author Name <email>" and the subject of a patch file.
patch_author() {
	git mailinfo /dev/null /dev/null <"$1" |
		awk '/^Author: / { sub(/^Author: /, ""); n = $0 } /^Email: / { sub(/^Email: /, ""); e = $0 } END { printf "%s <%s>\n", n, e }'
}
patch_subject() {
	git mailinfo /dev/null /dev/null <"$1" | sed -n 's/^Subject: //p'
}
