# SPDX-License-Identifier: LGPL-2.1-or-later
"""The generated systemd units pass `systemd-analyze verify`, and their sandbox keeps the
exposure score of `systemd-analyze security --offline=true` at or under what docs/ records."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from fgdtest import FGD, TestFailure, check, run

UNITS = sys.argv[1]
MAX_EXPOSURE = 2.6  # docs/ARCHITECTURE.md, "systemd"


def main():
    check(shutil.which("systemd-analyze"), "systemd-analyze is missing: scripts/install-deps.sh --tests")
    tmp = tempfile.mkdtemp(prefix="fgd-units-")
    try:
        # verify checks that ExecStart= exists: point it at the fgd just built, nothing else.
        with open(os.path.join(UNITS, "fgd.service")) as f:
            service = f.read()
        m = re.search(r"^ExecStart=(\S+)$", service, re.M)
        check(m and m.group(1).endswith("/sbin/fgd"), f"unexpected ExecStart= line: {m}")
        with open(os.path.join(tmp, "fgd.service"), "w") as f:
            f.write(service.replace(m.group(0), f"ExecStart={FGD}"))
        shutil.copy(os.path.join(UNITS, "fgd.socket"), tmp)
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", "fgd.socket", "fgd.service"],
                           cwd=tmp, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and not r.stderr.strip(),
              f"systemd-analyze verify: exit {r.returncode}\n{r.stdout}{r.stderr}")

        r = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                            os.path.join(UNITS, "fgd.service")],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r"Overall exposure level for fgd\.service: ([0-9.]+)", r.stdout + r.stderr)
        check(m, f"no exposure level in:\n{r.stdout}{r.stderr}")
        score = float(m.group(1))
        print(f"exposure level: {score}")
        check(score <= MAX_EXPOSURE, f"exposure {score} is above {MAX_EXPOSURE}:\n{r.stdout}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


run(main)
