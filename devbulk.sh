#!/bin/sh
# Builds devbulk and devbulk-plot into this checkout when they are missing
# or older than the sources (static, as the README's Install says), then runs
# devbulk with the arguments given; with none, the main job: devbulk bench
# (1000 devices of the best kind this kernel has, created and deleted one by
# one, by group and by releasing their namespace). Run as root.
#   ./devbulk.sh                 # the bench
#   ./devbulk.sh check           # any devbulk command
set -eu
cd "$(dirname "$0")"
PATH=$PATH:/usr/local/go/bin
if [ ! -x devbulk ] || [ ! -x devbulk-plot ] ||
	[ -n "$(find . -name '*.go' -newer devbulk -o -name go.mod -newer devbulk -o -name '*.json' -path './check/*' -newer devbulk | head -1)" ]; then
	command -v go >/dev/null || { echo "devbulk.sh: building devbulk needs Go 1.26 (https://go.dev/dl)" >&2; exit 2; }
	echo "devbulk.sh: building devbulk and devbulk-plot" >&2
	CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o . ./cmd/devbulk ./cmd/devbulk-plot
fi
[ $# -gt 0 ] || set -- bench
exec ./devbulk "$@"
