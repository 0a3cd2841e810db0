# SPDX-License-Identifier: GPL-2.0
# Shared definitions of the workbench scripts.  Source it, do not run it.
# Here: the environment, paths, messages, stage timing and base.conf; the
# rest is in scripts/lib/ by concern (series, apt, git, build, review).
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

# The rest, by concern (each file sourced here, in this order).
for _f in series apt git build review; do
	# shellcheck source=/dev/null
	. "$KSERIES_REPO/scripts/lib/$_f.sh"
done
unset _f
