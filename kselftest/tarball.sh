#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Builds the kselftest tarball fleets overlay: tuxrun (--tests
# kselftest-devbulk --parameters KSELFTEST=URL) and Linaro's kselftest test
# definition (TESTPROG_URL) unpack it as a kselftest install:
#   run_kselftest.sh  kselftest/  kselftest-list.txt (devbulk:devbulk_check.sh)
#   devbulk/          devbulk_check.sh, devbulk (static), config, settings
#
# usage: kselftest/tarball.sh -b DEVBULK -o OUT.tar.gz (-k KERNEL_TREE | -r SELFTESTS_DIR)
#   -b  a static devbulk: CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o devbulk ./cmd/devbulk
#   -k  a kernel tree: the collection is copied to tools/testing/selftests/devbulk
#       and installed by the kernel's own `make TARGETS=devbulk install`
#   -r  without a tree: a directory holding the kernel's run_kselftest.sh and
#       kselftest/ (tools/testing/selftests of any tree, or of Debian's
#       linux-source tarball), laid out as make install lays them out
set -eu

usage() {
	echo "usage: $0 -b DEVBULK -o OUT.tar.gz (-k KERNEL_TREE | -r SELFTESTS_DIR)" >&2
	exit 2
}
bin= out= tree= runner=
while getopts b:o:k:r: opt; do
	case $opt in
	b) bin=$OPTARG ;;
	o) out=$OPTARG ;;
	k) tree=$OPTARG ;;
	r) runner=$OPTARG ;;
	*) usage ;;
	esac
done
[ -n "$bin" ] && [ -n "$out" ] || usage
[ -n "$tree" ] && [ -n "$runner" ] && usage
[ -n "$tree" ] || [ -n "$runner" ] || usage
[ -x "$bin" ] || { echo "$0: -b $bin: not an executable" >&2; exit 2; }
# A fleet's root filesystem may have another libc, or none: static only.
if ldd "$bin" >/dev/null 2>&1; then
	echo "$0: -b $bin is dynamically linked: build it with CGO_ENABLED=0" >&2
	exit 2
fi
[ -e "$out" ] && { echo "$0: -o $out exists: not overwriting it" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
install=$work/kselftest_install

if [ -n "$tree" ]; then
	st=$tree/tools/testing/selftests
	[ -f "$st/lib.mk" ] || { echo "$0: -k $tree: no tools/testing/selftests/lib.mk" >&2; exit 2; }
	if [ -e "$st/devbulk" ] || [ -L "$st/devbulk" ]; then
		echo "$0: $st/devbulk exists: not replacing it" >&2
		exit 2
	fi
	mkdir "$st/devbulk"
	# Made here, so removed here: only after mkdir succeeded.
	trap 'rm -rf "$work" "$st/devbulk"' EXIT
	cp "$here/Makefile" "$here/devbulk_check.sh" "$here/config" "$here/settings" "$st/devbulk/"
	cp "$bin" "$st/devbulk/devbulk"
	make -s -C "$st" TARGETS=devbulk INSTALL_PATH="$install" install >&2
else
	[ -f "$runner/run_kselftest.sh" ] && [ -d "$runner/kselftest" ] ||
		{ echo "$0: -r $runner: no run_kselftest.sh and kselftest/" >&2; exit 2; }
	mkdir -p "$install/devbulk"
	cp "$runner/run_kselftest.sh" "$install/"
	cp -r "$runner/kselftest" "$install/"
	cp "$here/devbulk_check.sh" "$here/config" "$here/settings" "$install/devbulk/"
	cp "$bin" "$install/devbulk/devbulk"
	echo "devbulk:devbulk_check.sh" >"$install/kselftest-list.txt"
fi
chmod 755 "$install/devbulk/devbulk" "$install/devbulk/devbulk_check.sh"
tar -C "$install" -czf "$out" .
echo "$out: $(tar -tzf "$out" | grep -c .) entries" >&2
