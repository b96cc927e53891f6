#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kselftest wrapper for devbulk check: bulk device and netns teardown
# regression checks, reported as KTAP. Copy this directory to
# tools/testing/selftests/devbulk/ (or run it from here).
#
# Environment:
#   DEVBULK            the devbulk binary (default: the one installed beside
#                      this script, else devbulk on PATH)
#   DEVBULK_SUITE      a suite file (default: devbulk's full suite, every
#                      scenario on this kernel: the script passes --here)
#   DEVBULK_BASELINE   results saved by `devbulk check --save` to compare with
#   DEVBULK_THRESHOLD  smallest slowdown that fails, e.g. 40% (default 25%)
#
# Exit: 0 pass, 1 a scenario failed or regressed, 4 skip (kselftest's codes).

ksft_skip=4
here=$(dirname "$0")
if [ -z "$DEVBULK" ] && [ -x "$here/devbulk" ]; then
	DEVBULK=$here/devbulk
fi
DEVBULK=${DEVBULK:-devbulk}

skip() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	exit $ksft_skip
}

command -v "$DEVBULK" >/dev/null 2>&1 || skip "devbulk not found (set DEVBULK)"
[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_NET_ADMIN)"

# --here: the kernel under test is this one; the suite's vm scenarios run
# on it too, not in a VM of devbulk's own.
set -- --format ktap --quiet --here "$@"
[ -n "$DEVBULK_SUITE" ] && set -- "$@" --suite "$DEVBULK_SUITE"
[ -n "$DEVBULK_BASELINE" ] && set -- "$@" --baseline "$DEVBULK_BASELINE"
[ -n "$DEVBULK_THRESHOLD" ] && set -- "$@" --threshold "$DEVBULK_THRESHOLD"
exec "$DEVBULK" check "$@"
