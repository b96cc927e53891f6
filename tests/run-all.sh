#!/usr/bin/env bash
# Runs every devbulk test: gofmt, go vet, then unit and integration tests with
# the race detector, summarized by gotestsum. Installs what the tests need.
# Needs root: the integration tests make throwaway network namespaces (they
# never touch the host's own interfaces).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

if [ "$(id -u)" -ne 0 ]; then
	echo "tests/run-all.sh: run as root (the integration tests create network namespaces)" >&2
	exit 2
fi
# iproute2: `ip` for the side-by-side comparisons and the tests' own setup.
# qemu-system-x86 and busybox-static: the VM suite, which boots Debian's cloud
# kernel (fetched by the tests with apt-get download, so apt's lists must be
# current) to run the kinds this kernel may lack: dummy, vlan, ipip, gre.
apt-get update -qq
# gcc and libc6-dev: `go test -race` needs cgo (without a C compiler no test
# runs at all). bsdutils: script(1) for the progress-bar test on a pty.
# linux-source-6.1 and python3: the kernel's own KTAP parser
# (tools/testing/kunit/kunit.py) reads what `check --format ktap` writes.
# ipvsadm: the classic form of ipvs payloads, which the VM carries.
# lava-dispatcher and cpio: LAVA's own lava-run runs the jobs devbulk lava job
# writes, as a fleet's worker would (cpio: LAVA repacks the ramdisk with its
# test overlay). xz-utils and zstd: devbulk decompresses .ko.xz and .ko.zst
# modules with them (Debian's 6.12 modules are .ko.xz). make, flex, bison,
# bc, libelf-dev, libssl-dev and git: the source-tree tests build a kernel
# from linux-source-6.1 (kbuild.Toolchain says what a build needs).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	iproute2 qemu-system-x86 busybox-static gcc libc6-dev bsdutils linux-source-6.1 python3 ipvsadm \
	lava-dispatcher cpio xz-utils zstd make flex bison bc libelf-dev libssl-dev git >/dev/null
# The kernel's own tools, from the same tree: the KTAP parser, and the
# kselftest runner (run_kselftest.sh, kselftest/runner.sh) that runs
# kselftest/devbulk_check.sh as fleets (KernelCI, LKFT) would.
ktools=${XDG_CACHE_HOME:-$HOME/.cache}/devbulk/kernel-tools-6.1
if [ ! -f "$ktools/tools/testing/selftests/kselftest/runner.sh" ]; then
	rm -rf "$ktools.part" && mkdir -p "$ktools.part"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$ktools.part" --strip-components=1 \
		linux-source-6.1/tools/testing/kunit linux-source-6.1/tools/testing/selftests/run_kselftest.sh \
		linux-source-6.1/tools/testing/selftests/kselftest
	rm -rf "$ktools" && mv "$ktools.part" "$ktools"
fi
export DEVBULK_KUNIT=$ktools/tools/testing/kunit/kunit.py
export DEVBULK_KSELFTEST=$ktools/tools/testing/selftests

# The source tests' one cold kernel build (and the history it builds from)
# starts now, beside vet and the fuzzing, not minutes later when go test
# reaches tests/prebuild: on a fresh machine the source tests wait for it.
# There it is then a cache hit. Its outcome is said at the end.
prebuild_log=$(mktemp /tmp/devbulk-prebuild-XXXXXX.log)
go test -tags root -count=1 -timeout 75m ./tests/prebuild >"$prebuild_log" 2>&1 &
prebuild=$!
trap 'kill $prebuild 2>/dev/null || true' EXIT # a step below failed: not left building

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
go vet -tags root ./... # the examples that need root
# Short fuzzing passes (their seeds and testdata/fuzz corpora also run in
# the tests below): netlink replies and ACKs, records, the --netns resolver,
# suites and thresholds, payloads, modules.dep and .modinfo, result documents.
# Budgets are execution counts, not durations: with a duration, Go 1.26's fuzz
# coordinator can report its own deadline as a failure ("context deadline
# exceeded", golang/go#75804); a count has no deadline to race. Each takes a
# few seconds here. Minimizing a new input (for the cache's corpus, which a
# fresh machine throws away) once stalled a pass 20 s: at most 1 s each.
fuzz() { go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$3" -fuzzminimizetime 1s; }
fuzz ./nlbatch FuzzParseAck 50000x
fuzz ./nlbatch FuzzAckRoundTrip 200000x
fuzz ./nlbatch FuzzReplies 100000x
fuzz ./runs FuzzParseRecord 100000x
fuzz ./namespace FuzzResolve 100000x
fuzz ./check FuzzParseSuite 100000x
fuzz ./check FuzzParseThreshold 200000x
fuzz ./netnsbench FuzzParsePayload 200000x
fuzz ./kmod FuzzParseDep 200000x
fuzz ./kmod FuzzParseModinfo 200000x
fuzz ./charts FuzzFromDocument 50000x
# -tags root adds the examples that need root (bench, netnsbench).
# gotestsum prints each test and its closing DONE line; tests/summary then
# prints ran/passed/skipped/failed per package and fails on a skip whose
# reason tests/expected-skips does not name.
events=$(mktemp /tmp/devbulk-tests-XXXXXX.json)
status=0
go run gotest.tools/gotestsum@v1.13.0 --format testname --jsonfile "$events" -- -race -tags root -count=1 -timeout 75m ./... || status=$?
go run ./tests/summary -expected tests/expected-skips "$events" || status=1
if ! wait $prebuild; then
	echo "tests/prebuild, run early, failed:" >&2
	cat "$prebuild_log" >&2
	status=1
fi
rm -f "$prebuild_log"
if [ "$status" -ne 0 ]; then
	# A test that stalled and was stopped (SIGQUIT) has its goroutines in here.
	echo "the tests' events (go test -json), kept: $events" >&2
else
	rm -f "$events"
fi
exit $status
