#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Debian package: dpkg-buildpackage -b -us -uc builds fgd's .deb from a copy
of the tree; lintian reports no errors; the package holds the programs, the
units, the sysusers and tmpfiles entries, the man pages, the completions and
the example configuration; and the extracted fgd reads its fgd.conf from the
directory the package's tmpfiles entry creates (/etc/fgd); apt could install
it (its dependencies resolve; simulated, so this machine is left as it was)."""

import os
import re
import shutil
import subprocess
import tempfile

from fgdtest import check, run, skip

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WANT = [
    "usr/sbin/fgd", "usr/bin/fgctl",
    "usr/lib/systemd/system/fgd.service", "usr/lib/systemd/system/fgd.socket",
    "usr/lib/systemd/system/fgd-push.service",
    "usr/lib/sysusers.d/fgd.conf", "usr/lib/tmpfiles.d/fgd.conf",
    "usr/share/man/man8/fgd.8.gz", "usr/share/man/man1/fgctl.1.gz",
    "usr/share/man/man5/fgd.conf.5.gz",
    "usr/share/bash-completion/completions/fgctl", "usr/share/zsh/vendor-completions/_fgctl",
    "usr/share/fish/vendor_completions.d/fgctl.fish",
    "usr/share/doc/fgd/fgd.conf.example", "usr/share/doc/fgd/push.conf.example",
]


def test():
    for tool in ("dpkg-buildpackage", "dh", "lintian"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (dpkg-dev, debhelper, lintian: "
                 "scripts/install-deps.sh --tests)")
    with tempfile.TemporaryDirectory(prefix="fgd-deb-") as tmp:
        tree = os.path.join(tmp, "fgd")
        # The tree as git has it, without any build directory.
        files = subprocess.run(["git", "-C", SRC, "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], capture_output=True, check=True).stdout
        for rel in filter(None, files.decode().split("\0")):
            src = os.path.join(SRC, rel)
            if os.path.isfile(src):
                os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
                shutil.copy2(src, os.path.join(tree, rel))
        r = subprocess.run(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=tree,
                           capture_output=True, text=True, timeout=1200)
        check(r.returncode == 0, f"dpkg-buildpackage failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
        debs = [f for f in os.listdir(tmp) if re.fullmatch(r"fgd_[^_]+_amd64\.deb", f)]
        check(len(debs) == 1, f"no fgd .deb: {os.listdir(tmp)}")
        deb = os.path.join(tmp, debs[0])

        r = subprocess.run(["lintian", "--fail-on", "error", deb], capture_output=True,
                           text=True, timeout=600)
        errors = [l for l in r.stdout.splitlines() if l.startswith("E:")]
        check(r.returncode == 0 and not errors, f"lintian:\n{r.stdout}{r.stderr}")

        root = os.path.join(tmp, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        for want in WANT:
            check(os.path.exists(os.path.join(root, want)), f"the package lacks {want}")
        fgd_help = subprocess.run([os.path.join(root, "usr/sbin/fgd"), "--help"],
                                  capture_output=True, text=True).stdout
        with open(os.path.join(root, "usr/lib/tmpfiles.d/fgd.conf")) as f:
            tmpfiles = f.read()
        check("default /etc/fgd/fgd.conf" in fgd_help and
              re.search(r"^d /etc/fgd ", tmpfiles, re.M),
              f"fgd's fgd.conf and tmpfiles disagree:\n{fgd_help}\n{tmpfiles}")

        # README's install line, simulated: every dependency dpkg-shlibdeps
        # wrote must be one apt can satisfy.
        r = subprocess.run(["apt-get", "install", "-s", "-y", deb], capture_output=True,
                           text=True, timeout=300)
        check(r.returncode == 0 and re.search(r"^Inst fgd ", r.stdout, re.M),
              f"apt-get install -s {deb}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        print(f"{debs[0]}: {len(WANT)} files checked, lintian clean of errors, "
              "apt would install it")


run(test)
