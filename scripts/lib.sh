# SPDX-License-Identifier: GPL-2.0
# Common definitions for the workbench scripts.  Source it, do not run it.
#
# Everything the scripts create lives outside the repository, under
# $KSERIES_CACHE (default ~/.cache/kseries):
#   dl/       the downloaded Debian package and the private apt state
#   src/      the unpacked base tarball
#   linux/    the kernel work tree (git: tag kseries-base, branch series)
#   build/    the O= build directory
#   run/      initramfs, QEMU logs and results of the last test run

set -o pipefail

# The tools come from Debian's packages (scripts/deps.sh): put the system
# directories first, ahead of any pyenv or /usr/local shadowing them (the
# kernel's Python scripts need Debian's python3-ply, for instance).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

KSERIES_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KSERIES_CACHE=${KSERIES_CACHE:-$HOME/.cache/kseries}
KSERIES_SRC=$KSERIES_CACHE/src
KSERIES_TREE=${KSERIES_TREE:-$KSERIES_CACHE/linux}
KSERIES_BUILD=${KSERIES_BUILD:-$KSERIES_CACHE/build}
KSERIES_RUN=${KSERIES_RUN:-$KSERIES_CACHE/run}
KSERIES_JOBS=${KSERIES_JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
# Objects are identical whatever the build directory is called.
export CCACHE_BASEDIR=$KSERIES_CACHE
export CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-time_macros,include_file_mtime,include_file_ctime}

# Fixed metadata of the base import and of the series commits, so that
# commit ids do not depend on who or when.
KSERIES_BASE_TAG=kseries-base
KSERIES_BRANCH=series
KSERIES_BASE_NAME="Debian linux-source import"
KSERIES_BASE_EMAIL="base@kseries.invalid"

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

warn() {
	printf 'warning: %s\n' "$*" >&2
}

info() {
	printf '%s\n' "$*"
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

# The ordered patch list, one file name (relative to patches/) a line.
series_patches() {
	grep -v -E '^[[:space:]]*(#|$)' "$KSERIES_REPO/series"
}

# git in the kernel work tree.
ktree_git() {
	git -C "$KSERIES_TREE" "$@"
}

# Run a command with the machine's one build slot, so that two kernel
# builds (or a build and a QEMU run) never compete for the two cores.
with_build_lock() {
	mkdir -p "$KSERIES_CACHE"
	flock "$KSERIES_CACHE/build.lock" "$@"
}
