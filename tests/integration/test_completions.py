#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shell completions for fgctl (completions/): bash's, driven as bash-completion
drives it: verbs, a verb's options (from its --help), pids and comms for -p
and --comm, and the output extensions for -o; zsh's and fish's parse in their
shells, and fish's completes verbs and options; meson install puts all three
where the shells look for them."""

import json
import os
import shutil
import subprocess
import tempfile

from fgdtest import FGCTL, check, run

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "completions")
BUILD = os.path.dirname(os.environ.get("FG_TEST_BUILD_DIR", "build/tests"))


def complete(*words, cwd=None):
    """What bash's completion offers for the command line words (the last one being typed)."""
    script = (
        "shopt -s extglob\n"
        f"source {SRC}/fgctl.bash\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        "_fgctl\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = dict(os.environ, PATH=os.path.dirname(FGCTL) + ":" + os.environ["PATH"])
    r = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=60)
    check(r.returncode == 0, f"bash completion of {words} failed: {r.stderr}")
    return set(r.stdout.split())


def test():
    got = complete("fgctl", "re")
    check(got == {"record", "render"}, f"verbs for 're': {got}")
    got = complete("fgctl", "--socket", "/run/x.sock", "sn")
    check(got == {"snapshot"}, f"a verb after --socket: {got}")
    got = complete("fgctl", "record", "--fr")
    check(got == {"--frequency"}, f"record's options for '--fr': {got}")
    got = complete("fgctl", "push", "--")
    check({"--url", "--every", "--once", "--cursor", "--token-file"} <= got,
          f"push's options: {sorted(got)}")
    got = complete("fgctl", "record", "--group-by", "cg")
    check(got == {"cgroup", "cgroup-name"}, f"--group-by values: {got}")

    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        pid = str(sleeper.pid)
        got = complete("fgctl", "record", "-p", pid[:-1])
        check(pid in got, f"pid {pid} not offered for -p {pid[:-1]}: {sorted(got)[:10]}")
        got = complete("fgctl", "snapshot", "--comm", "slee")
        check("sleep" in got, f"comm 'sleep' not offered for --comm: {got}")
    finally:
        sleeper.kill()
        sleeper.wait()

    with tempfile.TemporaryDirectory() as tmp:
        for name in ("a.svg", "b.pb.gz", "c.c", "d.folded"):
            open(os.path.join(tmp, name), "w").close()
        os.mkdir(os.path.join(tmp, "sub"))
        got = complete("fgctl", "record", "-a", "-o", "", cwd=tmp)
        check(got == {"a.svg", "b.pb.gz", "d.folded", "sub"}, f"-o offers {got}")

    for shell, path, flag in (("zsh", "_fgctl", "-n"), ("fish", "fgctl.fish", "-n")):
        if not shutil.which(shell):
            print(f"{shell} is not installed: its completion file is not parsed here")
            continue
        r = subprocess.run([shell, flag, os.path.join(SRC, path)], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0 and not r.stderr.strip(), f"{shell} -n {path}: {r.stderr}")
        print(f"{shell} parses {path}")
        if shell == "fish":
            # fish completes without a terminal: the same questions as bash's.
            env = dict(os.environ, PATH=os.path.dirname(FGCTL) + ":" + os.environ["PATH"])
            r = subprocess.run(["fish", "-c", f"source {SRC}/fgctl.fish; complete -C 'fgctl rec';"
                                "echo SEP; complete -C 'fgctl record --fre'"],
                               capture_output=True, text=True, env=env, timeout=60)
            verbs, opts = r.stdout.split("SEP\n", 1)
            check([l.split("\t")[0] for l in verbs.split()] [:1] == ["record"] and
                  opts.split() == ["--frequency"], f"fish completes {r.stdout!r} {r.stderr!r}")

    # meson install puts them where bash-completion, zsh and fish look.
    r = subprocess.run(["meson", "introspect", BUILD, "--installed"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, f"meson introspect: {r.stderr}")
    installed = set(json.loads(r.stdout).values())
    for want in ("share/bash-completion/completions/fgctl", "share/zsh/vendor-completions/_fgctl",
                 "share/fish/vendor_completions.d/fgctl.fish"):
        check(any(p.endswith(want) for p in installed), f"{want} is not installed: {installed}")


run(test)
