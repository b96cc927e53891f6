#!/usr/bin/env bash
# Builds a git history between two unpacked kernel sources that devbulk can
# bisect when no stable git history is at hand (docs/xfrm-drain.md):
#   commit 1: OLD as it is;
#   commit 2: everything NEW changes outside net/ (headers, drivers, ...);
#   then one commit per file NEW changes under net/, in path order.
# Usage: net-history.sh OLD_DIR NEW_DIR OUT_DIR (OUT_DIR must not exist).
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") out=$(realpath -m "$3")
[ ! -e "$out" ] || { echo "net-history.sh: $out exists" >&2; exit 2; }
cp -a "$old" "$out"
cd "$out"
export GIT_AUTHOR_NAME=net-history GIT_AUTHOR_EMAIL=net-history@localhost \
	GIT_COMMITTER_NAME=net-history GIT_COMMITTER_EMAIL=net-history@localhost
git init -q
git add -f -A # Debian's source ignores its own top level (.gitignore: /*)
git commit -q -m "$(basename "$old") as unpacked"
rsync -a --delete --exclude=/net/ --exclude=/.git/ "$new"/ "$out"/
git add -f -A
git commit -q -m "$(basename "$new") outside net/"
# Each file under net/ that differs, is new or is gone, one commit each.
(cd "$old" && find net -type f; cd "$new" && find net -type f) | sort -u | while read -r f; do
	if [ -f "$new/$f" ] && cmp -s "$old/$f" "$new/$f"; then continue; fi
	if [ -f "$new/$f" ]; then
		mkdir -p "$(dirname "$f")" && cp -p "$new/$f" "$f"
	else
		rm -f "$f"
	fi
	git add -f -A -- "$f"
	git commit -q -m "$f as in $(basename "$new")"
done
echo "$(git rev-list --count HEAD) commits in $out; HEAD is $(basename "$new")"
