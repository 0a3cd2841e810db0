#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage build: the test kernel of the applied series (scripts/build-kernel.sh:
# config merged from the fragments, bzImage, modules, UAPI headers).
#   build:kernel   it configured as requested and built; log in
#                  $KSERIES_RUN/build.log
. "$(dirname "$0")/../lib.sh"

mkdir -p "$KSERIES_RUN"
if with_build_lock bash "$KSERIES_REPO/scripts/build-kernel.sh" >"$KSERIES_RUN/build.log" 2>&1; then
	result PASS build:kernel "bzImage and modules ($(cat "$KSERIES_BUILD/include/config/kernel.release"))"
else
	grep -E -B2 -A8 'error:|Error [0-9]|^make.*\*\*\*|^warning: requested' "$KSERIES_RUN/build.log" | tail -n 60 >&2
	result FAIL build:kernel "the kernel did not configure or build: $(grep -m1 -E 'error:|^warning: requested' "$KSERIES_RUN/build.log"), see $KSERIES_RUN/build.log"
	exit 1
fi
