#!/usr/bin/env bash
# Times devbulk's scripted path against iproute2's as whole processes:
# create N ifb in a fresh named netns (devbulk create vs ip -batch of the
# same adds), and delete them by group (devbulk delete --strategy group vs
# ip link del group). A third tool, ip-checked, is iproute2 paying for the
# one check devbulk cannot do without: a link dump of the namespace (ip
# link show) right before its ip link del group. Rounds are interleaved,
# the order rotates, and each round's namespace is emptied and removed
# (untimed) before the next.
# Prints Go benchmark lines for benchstat:
#   tests/scripted-parity.sh ./devbulk 2000 10 > out.txt
#   go run golang.org/x/perf/cmd/benchstat -col /tool out.txt
set -euo pipefail
devbulk=${1:?usage: scripted-parity.sh DEVBULK [COUNT] [ROUNDS]}
count=${2:-2000}
rounds=${3:-10}
work=$(mktemp -d)
# devbulk's records go where they usually are: /run/devbulk is on a tmpfs on
# most systems, where saving one costs no disk flush. /dev/shm is a tmpfs
# here too; where it is not, the records stay in $work, and the figures
# include the flushes.
state=$work/state
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	state=$(mktemp -d -p /dev/shm devbulk-parity-XXXXXX)
fi
trap 'rm -rf "$work" "$state"; ip netns del dbkpar 2>/dev/null || true' EXIT
export DEVBULK_STATE_DIR=$state
for ((i = 0; i < count; i++)); do echo "link add dbk$i group 9 type ifb"; done >"$work/adds"
ns=dbkpar

now() { date +%s%N; }
# one TOOL (devbulk, ip, ip-checked): a timed create, a timed group delete, an emptied and removed netns
one() {
	ip netns add $ns
	local t0 t1 t2
	t0=$(now)
	if [ "$1" = devbulk ]; then
		"$devbulk" create --netns $ns --kind ifb --count "$count" >/dev/null
		t1=$(now)
		"$devbulk" delete --netns $ns --strategy group >/dev/null
	else
		ip -n $ns -batch "$work/adds"
		t1=$(now)
		if [ "$1" = ip-checked ]; then ip -n $ns link show >/dev/null; fi
		ip -n $ns link del group 9
	fi
	t2=$(now)
	[ "$(ip -n $ns -o link | wc -l)" = 1 ] || { echo "devices left in $ns" >&2; exit 1; }
	ip netns del $ns
	sleep 0.3 # the empty namespace's cleanup, before the next round
	echo "BenchmarkScripted/phase=create/tool=$1 1 $((t1 - t0)) ns/op"
	echo "BenchmarkScripted/phase=delete-group/tool=$1 1 $((t2 - t1)) ns/op"
}
tools=(devbulk ip ip-checked)
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#tools[@]}; k++)); do one "${tools[(r + k) % ${#tools[@]}]}"; done
done
