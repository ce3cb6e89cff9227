#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Names the docs use that the tree does not have.

Reads the backquoted names and paths of each Markdown file given (docs/*.md
and README.md by default), and the module names in its fenced diagrams, and
checks each against the tree: a path or file name must be a file or folder,
a module (`fgd-evset`, `common/profile/folded`) a .c or .h, an identifier
(`fg_dso__dwarf()`, `struct fg_status`, `FG_RESOLVE_TRUNCATED`, a snake_case
field, a dotted status member) a word of common/, daemon/, cli/ or tests/.
Names of things outside the tree (the kernel's, libdw's, options, URLs) are
reported too where they look like ours; the ignore list below holds the ones
known to be external, so what is printed is worth a look.

Usage: scripts/check-doc-names.py [FILE.md...]   (from the source root)
Exit status 1 when something is reported.
"""
import os
import re
import subprocess
import sys

CODE_DIRS = ["common", "daemon", "cli", "tests"]
# Folders a file is looked for in when the doc names it without one.
SOURCE_EXT = [".c", ".h", ".js", ".py", ""]

# Backquoted names that are not fgd's: the kernel's, libraries', systemd's,
# flamegraph.pl's, units and users fgd installs, the text forms of files.
EXTERNAL = {
    # kernel, libc, perf
    "sched_switch", "sys_exit", "data_head", "data_tail", "attr.build_id",
    "mm->start_stack", "kernel.perf_event_paranoid", "perf_event_mlock_kb",
    "kernel.perf_event_max_sample_rate", "fs.protected_symlinks",
    "bpf_get_stackid()", "BPF_F_USER_STACK", "M_MMAP_THRESHOLD",
    "malloc_trim()", "malloc_trim", "free()", "mmap()", "MADV_DONTNEED",
    "SHT_NOBITS", "R_X86_64_IRELATIVE", "DW_CFA_restore_state",
    "DW_TAG_inlined_subroutine", "DW_AT_sibling", "dwarf_getscopes_die()",
    "ring_buffer__consume()", "cplus_demangle", "renameat()",
    "readlinkat()", "prctl(PR_SET_NAME)", "sd_listen_fds", "perf_event_open",
    "sched_setscheduler", "tp_btf/sched_switch", "tp_btf/sys_exit",
    "PERF_CONTEXT_*", "PERF_RECORD_LOST", "LOST_SAMPLES", "O_CREAT|O_EXCL|O_NOFOLLOW",
    "O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC", "O_PATH|O_NOFOLLOW", "AT_SYMLINK_NOFOLLOW",
    "RESOLVE_IN_ROOT", "RESOLVE_NO_MAGICLINKS", "VmHWM", "WATCHDOG_USEC",
    # systemd unit settings and the files fgd installs
    "PrivateTmp=no", "PrivateNetwork=yes", "ProtectKernelTunables=",
    "ProtectKernelLogs=", "LimitRTPRIO=1", "LimitRTTIME=1s", "MemoryMax=2G",
    "StateDirectory=fgd", "StateDirectory=fgd-push", "Type=notify",
    "Requires=fgd.socket", "fgd.socket", "fgd.service", "fgd-push.service",
    "fgd-push", "fgd-readers", "fgd", "push.conf", "palette.map",
    "fgd-timed", "@system-service", "fgd.conf", "kernel.bpf_stats_enabled",
}


def tree_files():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if f]


FILES = tree_files()
FILESET = set(FILES)
DIRS = {os.path.dirname(f) for f in FILES}
for d in list(DIRS):
    while d:
        DIRS.add(d)
        d = os.path.dirname(d)
BASENAMES = {}
for f in FILES:
    BASENAMES.setdefault(os.path.basename(f), []).append(f)

_words = None


def words():
    """Every identifier in the code, once."""
    global _words
    if _words is None:
        _words = set()
        for f in FILES:
            if f.split("/")[0] not in CODE_DIRS and not f.startswith("systemd/"):
                continue
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    _words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fh.read()))
            except (IsADirectoryError, FileNotFoundError):
                pass
    return _words


_members = None


def members():
    """The names replies spell: schema members (M_U64(name), M_NAMED("name",
    ...)) and the keys written by hand (string literals)."""
    global _members
    if _members is None:
        _members = set()
        for f in FILES:
            if f.split("/")[0] not in ("common", "daemon", "cli") or not f.endswith(".c"):
                continue
            text = open(f, encoding="utf-8", errors="replace").read()
            _members.update(re.findall(r"\bM_[A-Z0-9_]+\(\s*([a-z_0-9]+)", text))
            _members.update(re.findall(r'"([a-z_][a-z_0-9]*)"', text))
    return _members


def path_exists(p):
    p = p.rstrip("/")
    for base in ["", "common/", "daemon/", "daemon/sources/", "cli/"]:
        for ext in SOURCE_EXT:
            q = base + p + ext
            if q in FILESET or q in DIRS:
                return True
    # a folder-relative name such as "profile/folded.h" or "symbols/fgd-elf.h"
    for ext in SOURCE_EXT:
        if any(f.endswith("/" + p + ext) for f in FILES):
            return True
    return False


def file_exists(name):
    """A file named without its folder: `fgd-evset.c`, `fgd-evset`, `flame-view.js`."""
    for ext in SOURCE_EXT:
        if name + ext in BASENAMES:
            return True
    return False


IDENT = re.compile(r"^(?:struct |enum |union )?([A-Za-z_][A-Za-z0-9_]*)(?:\(.*\))?$")


def check(tok):
    """None when tok names something the tree has (or is not ours), else why not."""
    t = tok.strip()
    if t in EXTERNAL or not t:
        return None
    # Paths outside the source tree: /proc, /tmp, /usr, URLs.
    if t.startswith(("/", "~", "http", "-", "$", "{")) or re.match(r'"[^"]*":', t):
        return None
    # `common/proto/proto.[ch]`: the .c and the .h
    if t.endswith(".[ch]"):
        return check(t[:-4] + "c") or check(t[:-4] + "h")
    # fgctl_X_parse() and similar templates, `fgctl-{a,b}` groups
    m = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", t)
    if m and "," in m.group(2):
        bad = [p for p in m.group(2).split(",")
               if check(m.group(1) + p + m.group(3))]
        return ("missing: " + ", ".join(bad)) if bad else None
    if "/" in t and " " not in t:
        first = t.split("/")[0]
        if first in ("common", "daemon", "cli", "tests", "docs", "systemd",
                     "scripts", "bpf", "base", "perf", "unwind", "profile",
                     "storage", "render", "proto", "sources", "resolver",
                     "symbols", "consumers", "server") or t.startswith('"'):
            p = t.strip('"')
            return None if path_exists(p) else "no such path"
        return None
    if re.fullmatch(r"[\w.+-]+\.(c|h|js|py|md|build|in|bpf\.c)", t):
        return None if file_exists(t) or path_exists(t) else "no such file"
    if re.fullmatch(r"fgd-[a-z0-9-]+", t) or re.fullmatch(r"fgctl-[a-z0-9-]+", t):
        return None if file_exists(t) else "no such module"
    if re.fullmatch(r"(test|fuzz)-[a-z0-9-]+", t):
        return None if file_exists("tests/unit/" + t) or file_exists(t) else "no such test"
    # dotted status/meta members: every part after the first is a word
    if re.fullmatch(r"[a-z_]+(\[\])?(\.[a-z_*]+(\[\])?)+", t):
        parts = [p.replace("[]", "") for p in t.split(".")]
        # status's and the metadata's members are checked against the
        # names the replies spell; other dotted names against any word
        known = members() if parts[0] in members() or parts[0] == "meta" else words()
        bad = [p for p in parts[1:] if p != "*" and p not in known]
        return ("unknown member " + ".".join(bad)) if bad else None
    # a family: `fgctl_verb_X(ctx, argc, argv)`, `fgctl_X_parse()`
    m = re.fullmatch(r"([a-z_]*_)(?:X|VERB)(_[a-z_]*)?(\(.*\))?", t)
    if m:
        pat = re.compile(re.escape(m.group(1)) + r"[a-z]+" + re.escape(m.group(2) or ""))
        return None if any(pat.fullmatch(w) for w in words()) else "no such family"
    m = IDENT.match(t)
    if m:
        name = m.group(1)
        ours = (name.startswith(("fg_", "fgd_", "FG_", "fgctl_")) or
                t.startswith(("struct ", "enum ")) or t.endswith(")") or
                ("_" in name and name.islower()))
        # a test named by its file's stem: `test_short_lived`
        if ours and name not in words() and not file_exists(name):
            return "no such identifier"
    return None


def names_in(path):
    text = open(path, encoding="utf-8").read()
    found = []
    in_fence = False
    folder = None
    for n, line in enumerate(text.splitlines(), 1):
        # a module table under "### `common/base/`": its first column names
        # files of that folder, without their extension
        m = re.match(r"#+ `((?:common|daemon|cli)/[\w/]*)`", line)
        if m:
            folder = m.group(1).rstrip("/")
        elif line.startswith("#"):
            folder = None
        m = re.match(r"\| `([^`]+)`(?:, `([^`]+)`)*", line)
        if folder and m:
            cell = line.split("|")[1]
            for tok in re.findall(r"`([^`]+)`", cell):
                found.append((n, folder + "/" + tok))
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            # module names and identifiers drawn in diagrams
            for tok in re.findall(r"(?:common|daemon|cli)/[\w/.-]+|fgd-[a-z-]+\w*|"
                                  r"\bfgd?_\w+(?:\(\))?|\b[a-z_]+\(\)", line):
                found.append((n, tok.rstrip(".,:;)")))
            continue
        for tok in re.findall(r"`([^`\n]+)`", line):
            found.append((n, tok))
        # our modules and paths named in prose, outside backquotes
        prose = re.sub(r"`[^`\n]+`", "", line)
        for tok in re.findall(r"(?<![\w/.-])(?:(?:common|daemon|cli|tests)/[\w/.-]*\w|"
                              r"fgd-[a-z-]*[a-z](?:\.[ch])?|fgctl-[a-z-]*[a-z]\.[ch])",
                              prose):
            found.append((n, tok))
    return found


def main(argv):
    docs = argv[1:] or sorted(
        ["README.md"] + [os.path.join("docs", f) for f in os.listdir("docs")
                         if f.endswith(".md")])
    bad = 0
    for doc in docs:
        for n, tok in names_in(doc):
            why = check(tok)
            if why:
                print(f"{doc}:{n}: `{tok}`: {why}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
