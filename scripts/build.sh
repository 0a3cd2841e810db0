#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The main job: fetch the base, apply the series, build the kernel, in the
# developer's work tree ($KSERIES_WORKTREE, default ~/.cache/kseries/linux).
#
#   scripts/build.sh                                 base from Debian's package
#   KSERIES_IMPORT_FROM=/path scripts/build.sh       base from your git tree
#                                                    (only read)
#
# Prints where the artifacts are and the wall time of each stage.
. "$(dirname "$0")/lib.sh"
check_free_space

export KSERIES_TIMES=$KSERIES_CACHE/build-times
mkdir -p "$KSERIES_CACHE"
: >"$KSERIES_TIMES"

stage_begin deps
bash "$KSERIES_REPO/scripts/deps.sh" || exit 1
stage_end
stage_begin fetch-base
bash "$KSERIES_REPO/scripts/fetch-base.sh" || exit 1
stage_end
stage_begin apply
bash "$KSERIES_REPO/scripts/apply.sh" || exit 1
stage_end
stage_begin build
with_build_lock bash "$KSERIES_REPO/scripts/build-kernel.sh" || exit 1
stage_end

kver=$(cat "$KSERIES_BUILD/include/config/kernel.release")
cat <<EOT

Artifacts ($kver):
  work tree   $KSERIES_WORKTREE (branch $KSERIES_BRANCH on $KSERIES_BASE_TAG)
  kernel      $KSERIES_BUILD/arch/x86/boot/bzImage
  config      $KSERIES_BUILD/.config
  modules     $KSERIES_BUILD/modroot/lib/modules/$kver
  amdgpu      $(find "$KSERIES_BUILD/modroot" -name 'amdgpu.ko*' | head -n 1)
  headers     $KSERIES_BUILD/usr/include

Stage times:
$(cat "$KSERIES_TIMES")
EOT
