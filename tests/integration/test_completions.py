#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shell completions for fgctl (completions/), each driven as its shell drives it:
bash's as bash-completion calls it, zsh's under the completion system's options
with its builtins as stand-ins, fish's with complete -C. All three offer the
verbs, a verb's options (every one its --help lists, several to a line too, and
only those the verb takes), pids and comms for -p and --comm, the formats the
verb takes for -f and --from, and the output extensions for -o, and find the
verb after global options; meson install puts them where the shells look."""

import json
import os
import shutil
import subprocess
import tempfile

from fgdtest import FGCTL, check, run

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "completions")
BUILD = os.path.dirname(os.environ.get("FG_TEST_BUILD_DIR", "build/tests"))
ENV = dict(os.environ, PATH=os.path.dirname(os.path.abspath(FGCTL)) + ":" + os.environ["PATH"])


def complete(*words, cwd=None, env=ENV):
    """What bash's completion offers for the command line words (the last one being typed)."""
    script = (
        "shopt -s extglob\n"
        f"source {SRC}/fgctl.bash\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        "_fgctl\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    r = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=60)
    check(r.returncode == 0, f"bash completion of {words} failed: {r.stderr}")
    return set(r.stdout.split())


# zsh completes only inside a line editor widget. Outside one, _fgctl runs under the
# options the completion system gives completers, with compadd, _describe, _files and
# _pids as stand-ins that print what they would offer; _files -g globs as _files does.
ZSH_HARNESS = r"""
setopt ${=FGCTL_ZSH_OPTIONS} || exit 3
compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; print -rl -- "$@" }
_describe() { print -rl -- ${${(P)4}%%:*} }
_files() { if [[ $1 == -g ]]; then print -rl -- ${~2} *(/); else print -rl -- *; fi }
_pids() { print -rl -- $(ps -eo pid=) }
words=("$@"); CURRENT=$#; PREFIX=$words[-1]
source "$FGCTL_ZSH_COMPLETION"
"""


_zsh_options = []


def zsh_complete(*words, cwd=None, env=ENV):
    """What zsh's completion offers: what _fgctl hands the stand-ins, matched against the
    word being typed as compadd matches it."""
    if not _zsh_options:
        # compinit defines them; it takes a while, so once.
        r = subprocess.run(["zsh", "-f", "-c", "autoload -Uz compinit && compinit -u -D && "
                            "print -r -- $_comp_options"], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0 and r.stdout.split(), f"zsh compinit: {r.stderr}")
        _zsh_options.extend(r.stdout.split())
    env = dict(env, FGCTL_ZSH_COMPLETION=os.path.join(SRC, "_fgctl"),
               FGCTL_ZSH_OPTIONS=" ".join(_zsh_options))
    r = subprocess.run(["zsh", "-f", "-c", ZSH_HARNESS, "zsh"] + list(words),
                       capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
    check(r.returncode == 0 and not r.stderr.strip(),
          f"zsh completion of {words} failed: {r.returncode} {r.stderr}")
    return {w for w in r.stdout.splitlines() if w and w.startswith(words[-1])}


def fish_complete(*words, cwd=None, env=ENV):
    """What fish's completion offers (complete -C, without the descriptions)."""
    line = " ".join(words).replace("\\", "\\\\").replace("'", "\\'")
    r = subprocess.run(["fish", "-c", f"source {SRC}/fgctl.fish; complete -C '{line}'"],
                       capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
    check(r.returncode == 0 and not r.stderr.strip(),
          f"fish completion of {words} failed: {r.stderr}")
    return {l.split("\t")[0] for l in r.stdout.splitlines()}


_accepted = {}


def accepted(verb, option):
    """Whether fgctl VERB takes option: getopt does not call it unknown (in English: C
    locale). diff takes -s and --socket only with --baseline."""
    if (verb, option) not in _accepted:
        ok = False
        with tempfile.TemporaryDirectory() as tmp:
            for extra in ([], ["--baseline", "--last 5m"]) if verb == "diff" else ([],):
                r = subprocess.run([FGCTL, "-s", os.path.join(tmp, "none.sock"), verb] + extra
                                   + [option], stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, cwd=tmp, env=dict(ENV, LC_ALL="C"), timeout=20)
                if "unrecognized option" not in r.stderr and "invalid option" not in r.stderr:
                    ok = True
                    break
        _accepted[verb, option] = ok
    return _accepted[verb, option]


VERBS = ("record", "snapshot", "top", "status", "render", "diff", "heatmap", "push")

# What every shell offers for a command line (the last word being typed).
CASES = (
    (("fgctl", "re"), {"record", "render"}),
    (("fgctl", "record", "--fre"), {"--frequency"}),
    # Every option of a help line that lists several, not just its first.
    (("fgctl", "record", "--inv"), {"--inverted"}),
    (("fgctl", "record", "--wi"), {"--width"}),
    (("fgctl", "record", "--unt"), {"--until"}),
    (("fgctl", "snapshot", "--inv"), {"--inverted"}),
    (("fgctl", "record", "--fla"), {"--flamechart"}),
    (("fgctl", "snapshot", "--fla"), {"--flamechart"}),
    (("fgctl", "record", "--fo"), {"--format", "--focus"}),
    # status's --json, though its --help may list no option line.
    (("fgctl", "status", "--j"), {"--json"}),
    # The verb after global options.
    (("fgctl", "--socket", "/run/x.sock", "sn"), {"snapshot"}),
    (("fgctl", "--socket", "/s", "top", "--j"), {"--json"}),
    (("fgctl", "-s", "/s", "top", "--j"), {"--json"}),
    (("fgctl", "--socket=/s", "top", "--j"), {"--json"}),
    # The formats each verb takes, as its --help lists them (diff: no pprof, no speedscope).
    (("fgctl", "record", "-f", ""), {"svg", "html", "folded", "timed", "pprof", "speedscope"}),
    (("fgctl", "snapshot", "-f", ""), {"svg", "html", "folded", "pprof", "speedscope"}),
    (("fgctl", "render", "-f", ""), {"svg", "html", "folded", "pprof", "speedscope"}),
    (("fgctl", "render", "--format", "j"), set()),
    (("fgctl", "diff", "-f", ""), {"svg", "html", "folded"}),
    (("fgctl", "heatmap", "--format", ""), {"html", "json", "svg", "timed"}),
    (("fgctl", "push", "--format", ""), {"pprof", "folded"}),
    (("fgctl", "render", "--from", ""), {"folded", "perf"}),
    (("fgctl", "heatmap", "--from", ""), {"perf", "timed"}),
    (("fgctl", "record", "--group-by", "cg"), {"cgroup", "cgroup-name"}),
)


def check_shell(shell, comp):
    for words, want in CASES:
        got = comp(*words)
        check(got == want, f"{shell} offers {sorted(got)} for {' '.join(words)!r}, not "
              f"{sorted(want)}")
    # A verb's options are those it takes, and all of them, short ones too.
    for verb in VERBS:
        got = comp("fgctl", verb, "-")
        bad = sorted(o for o in got if not accepted(verb, o))
        check(not bad, f"{shell} offers {bad} for fgctl {verb}, which refuses them")
    got = comp("fgctl", "push", "--")
    check({"--url", "--every", "--once", "--cursor", "--token-file"} <= got,
          f"{shell}: push's options: {sorted(got)}")
    got = comp("fgctl", "record", "-")
    check({"-p", "-a", "-F", "-q", "--since", "--until", "--minwidth", "--no-idle",
           "--stackcollapse-names"} <= got, f"{shell}: record's options: {sorted(got)}")

    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        pid = str(sleeper.pid)
        got = comp("fgctl", "record", "-p", pid[:-1])
        check(pid in got, f"{shell}: pid {pid} not offered for -p {pid[:-1]}: {sorted(got)[:10]}")
        got = comp("fgctl", "snapshot", "--comm", "slee")
        check("sleep" in got, f"{shell}: comm 'sleep' not offered for --comm: {got}")
        # bash and fish take a name after -p too: the pids of its processes. (zsh shows
        # each pid with its name, and matches what is typed against the pids.)
        if shell != "zsh":
            got = comp("fgctl", "record", "-p", "slee")
            check(pid in got, f"{shell}: pid {pid} not offered for -p slee: {sorted(got)[:10]}")
    finally:
        sleeper.kill()
        sleeper.wait()

    with tempfile.TemporaryDirectory() as tmp:
        for name in ("a.svg", "b.pb.gz", "c.c", "d.folded"):
            open(os.path.join(tmp, name), "w").close()
        os.mkdir(os.path.join(tmp, "sub"))
        # fish marks directories with a slash.
        got = {w.rstrip("/") for w in comp("fgctl", "record", "-a", "-o", "", cwd=tmp)}
        check(got == {"a.svg", "b.pb.gz", "d.folded", "sub"}, f"{shell}: -o offers {got}")
        # render's --pid is a flag: the input files follow it.
        got = {w.rstrip("/") for w in comp("fgctl", "render", "--pid", "", cwd=tmp)}
        check(got == {"a.svg", "b.pb.gz", "c.c", "d.folded", "sub"},
              f"{shell}: render --pid offers {sorted(got)[:10]}")

        # An fgctl whose status --help has no option line, as it once had none: status's
        # --json all the same.
        old = os.path.join(tmp, "bin")
        os.mkdir(old)
        with open(os.path.join(old, "fgctl"), "w") as f:
            f.write('#!/bin/sh\n'
                    'if [ "$1 $2" = "status --help" ]; then\n'
                    '\techo "Usage: fgctl status [--json]"\n'
                    '\texit 0\n'
                    'fi\n'
                    f'exec {os.path.abspath(FGCTL)} "$@"\n')
        os.chmod(os.path.join(old, "fgctl"), 0o755)
        got = comp("fgctl", "status", "--", env=dict(ENV, PATH=old + ":" + ENV["PATH"]))
        check(got == {"--json"}, f"{shell}: status's options without option lines: {got}")
    print(f"{shell} completes fgctl")


def test():
    check_shell("bash", complete)
    # bash splits --socket=PATH at the '='.
    got = complete("fgctl", "--socket", "=", "/s", "top", "--j")
    check(got == {"--json"}, f"bash: top's options after --socket=/s: {got}")

    for shell, path, comp in (("zsh", "_fgctl", zsh_complete),
                              ("fish", "fgctl.fish", fish_complete)):
        if not shutil.which(shell):
            print(f"{shell} is not installed: its completion is not checked here")
            continue
        r = subprocess.run([shell, "-n", os.path.join(SRC, path)], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0 and not r.stderr.strip(), f"{shell} -n {path}: {r.stderr}")
        check_shell(shell, comp)

    # meson install puts them where bash-completion, zsh and fish look.
    r = subprocess.run(["meson", "introspect", BUILD, "--installed"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, f"meson introspect: {r.stderr}")
    installed = set(json.loads(r.stdout).values())
    # zsh's directory for a distribution's (prefix /usr) or a local install's.
    r = subprocess.run(["meson", "introspect", BUILD, "--buildoptions"], capture_output=True,
                       text=True, timeout=60)
    prefix = [o["value"] for o in json.loads(r.stdout) if o["name"] == "prefix"][0]
    zsh_dir = "vendor-completions" if prefix == "/usr" else "site-functions"
    for want in ("share/bash-completion/completions/fgctl", f"share/zsh/{zsh_dir}/_fgctl",
                 "share/fish/vendor_completions.d/fgctl.fish"):
        check(any(p.endswith(want) for p in installed), f"{want} is not installed: {installed}")


run(test)
