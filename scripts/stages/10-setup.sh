#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage setup: the packages the workbench needs and the base tree.
#   setup:deps       scripts/deps.sh installed what was missing
#   setup:base       scripts/fetch-base.sh made $KSERIES_WORKTREE at the base
. "$(dirname "$0")/../lib.sh"

if bash "$KSERIES_REPO/scripts/deps.sh" >&2; then
	result PASS setup:deps "all packages installed"
else
	result FAIL setup:deps "scripts/deps.sh failed"
	exit 1
fi
if bash "$KSERIES_REPO/scripts/fetch-base.sh" >&2; then
	result PASS setup:base "$KSERIES_BASE_TAG = $BASE_COMMIT ($BASE_PACKAGE $BASE_VERSION)"
else
	result FAIL setup:base "scripts/fetch-base.sh failed"
	exit 1
fi
