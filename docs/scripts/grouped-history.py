#!/usr/bin/env python3
"""Builds a git history between two unpacked kernel sources that devbulk can
bisect when the stable series' own commits are not at hand
(docs/xfrm-drain.md).

A stable commit changes a file together with the headers it needs; a history
of one commit per file splits them and does not compile in its middle. This
one groups the changed files the way such commits would: a file joins a
header when an identifier stands on a changed line of both (comments and
strings left out) and on changed lines of at most MAXDF changed files (a
rare identifier is a field or function the change adds, renames, retypes
or drops; a common one such as "lock" would join everything). Groups are
closed under that relation. (Counting an identifier's uses instead missed
a function whose parameters changed: ip_vs_nat_icmp in 6.1.192's ip_vs.h.)

  commit 1: OLD as unpacked;
  commit 2: every group with no file under net/ (and other architectures,
            tools/, Documentation/, samples/, which an x86 build does not
            compile);
  commit 3: the largest group with a file under net/ (the shared headers and
            their users);
  then each other group with a file under net/, one commit each, in the
  path order of its first file; the last commit is NEW exactly.

Usage: grouped-history.py OLD_DIR NEW_DIR OUT_DIR [MAXDF, default 12]
OUT_DIR must not exist. Needs git and Python 3.
"""
import collections
import difflib
import os
import re
import shutil
import subprocess
import sys

KEYWORDS = set("""auto break case char const continue default do double else
enum extern float for goto if inline int long register restrict return short
signed sizeof static struct switch typedef union unsigned void volatile while
bool true false NULL define include ifdef ifndef endif elif undef""".split())
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def walk(root):
    for d, _, names in os.walk(root):
        for n in names:
            yield os.path.relpath(os.path.join(d, n), root)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def compiled(f):
    """Whether an x86 build can read the file."""
    if f.startswith(("tools/", "Documentation/", "samples/")):
        return False
    if f.startswith("arch/") and not f.startswith("arch/x86/"):
        return False
    return f.endswith((".c", ".h", ".S", "Makefile", "Kconfig"))


def lines(data):
    return NOISE.sub(" ", (data or b"").decode("latin-1")).splitlines()


def changed_ids(old, new):
    """The identifiers on the lines a diff of old to new adds or removes."""
    ids = set()
    for line in difflib.unified_diff(lines(old), lines(new), lineterm="", n=0):
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            ids |= {k for k in TOKEN.findall(line[1:]) if k not in KEYWORDS}
    return ids


def groups(old, new, changed, maxdf):
    delta = {}
    for f in changed:
        if compiled(f):
            delta[f] = changed_ids(read(os.path.join(old, f)), read(os.path.join(new, f)))
    df = collections.Counter(k for s in delta.values() for k in s)
    parent = {f: f for f in changed}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    users = collections.defaultdict(list)
    for f, ks in delta.items():
        for k in ks:
            if df[k] <= maxdf:
                users[k].append(f)
    for fs in users.values():
        for h in (f for f in fs if f.endswith(".h")):
            for f in fs:
                parent[find(f)] = find(h)
    out = collections.defaultdict(list)
    for f in changed:
        out[find(f)].append(f)
    return [sorted(g) for g in out.values()]


def git(out, *args):
    subprocess.run(["git", *args], cwd=out, check=True)


def commit(out, old, new, files, message):
    for f in files:
        data = read(os.path.join(new, f))
        dst = os.path.join(out, f)
        if data is None:
            os.remove(dst)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(new, f), dst)
    git(out, "add", "-f", "-A", "--", *files)
    git(out, "commit", "-q", "-m", message)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.split("\n\n")[-1])
    old, new, out = (os.path.abspath(p) for p in sys.argv[1:4])
    maxdf = int(sys.argv[4]) if len(sys.argv) == 5 else 12
    if os.path.exists(out):
        sys.exit(f"grouped-history.py: {out} exists")
    changed = sorted(f for f in set(walk(old)) | set(walk(new))
                     if read(os.path.join(old, f)) != read(os.path.join(new, f)))
    found = groups(old, new, changed, maxdf)
    net = sorted((g for g in found if any(f.startswith("net/") for f in g)), key=lambda g: g[0])
    rest = sorted(f for g in found if g not in net for f in g)
    net.sort(key=len, reverse=True)
    net = net[:1] + sorted(net[1:], key=lambda g: g[0])
    shutil.copytree(old, out, symlinks=True)
    for k, v in (("NAME", "grouped-history"), ("EMAIL", "grouped-history@localhost")):
        os.environ[f"GIT_AUTHOR_{k}"] = os.environ[f"GIT_COMMITTER_{k}"] = v
    git(out, "init", "-q")
    git(out, "add", "-f", "-A")  # Debian's source ignores its own top level
    git(out, "commit", "-q", "-m", f"{os.path.basename(old)} as unpacked")
    name = os.path.basename(new)
    commit(out, old, new, rest, f"{name}: {len(rest)} files in groups outside net/")
    for g in net:
        shown = [f for f in g if f.startswith("net/")][:3]
        more = f" and {len(g) - len(shown)} more" if len(g) > len(shown) else ""
        commit(out, old, new, g, f"{', '.join(shown)}{more} as in {name}\n\n" + "\n".join(g))
    print(f"{len(net) + 2} commits in {out}; the last is {name}; "
          f"the largest group under net/ has {len(net[0])} files")


if __name__ == "__main__":
    main()
