#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage vm: one boot of the test VM running scripts/vm/plan; every KUnit
# case and kselftest case is a result, and so is every kernel splat
# (scripts/vm/run.sh).
. "$(dirname "$0")/../lib.sh"

exec bash "$KSERIES_REPO/scripts/vm/run.sh"
