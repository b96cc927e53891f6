#!/bin/sh
# Regenerate devices/testdata/linkadd/<case>.hex: the exact RTM_NEWLINK
# request bytes vishvananda/netlink's LinkAdd sends for each case in main.go.
# Each case runs under strace in its own throwaway network namespace (never
# the host's), so nlmsg_seq is 1 in every golden. LinkAdd errors (missing
# kernel modules) are expected; the request has been sent by then.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$root/devices/testdata/linkadd"
command -v strace >/dev/null || { apt-get update && apt-get install -y strace; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/linkaddgolden" ./devices/internal/linkaddgolden)
mkdir -p "$out"
for c in $("$tmp/linkaddgolden"); do
	unshare -n strace -f -qq -e trace=sendto,sendmsg -e write=all -xx -s 65536 \
		-o "$tmp/$c.trace" "$tmp/linkaddgolden" "$c" || true
	# -e write=all hex-dumps each sent buffer on " | OFFSET  xx xx ..." lines
	# after the syscall line; keep the buffers whose nlmsg_type is 16.
	awk '
	function flush() { if (substr(buf, 9, 4) == "1000") { print buf; n++ } buf = "" }
	/^ \| [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / { h = substr($0, 11, 49); gsub(/ /, "", h); buf = buf h; next }
	{ flush() }
	END { flush(); if (n != 1) { print "want 1 RTM_NEWLINK, got " n > "/dev/stderr"; exit 1 } }
	' "$tmp/$c.trace" >"$out/$c.hex"
	echo "$c: $(($(tr -d '\n' <"$out/$c.hex" | wc -c) / 2)) bytes" >&2
done
