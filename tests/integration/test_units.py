# SPDX-License-Identifier: LGPL-2.1-or-later
"""The generated systemd units pass `systemd-analyze verify`, and their sandbox keeps the
exposure score of `systemd-analyze security --offline=true` at or under what docs/ records:
fgd.service, and fgd-push.service (fgctl push, the one part with network, run unprivileged
as the user fgd.sysusers makes, a member of the socket's and the reader group, its settings
in push.conf); tmpfiles makes the directory fgd reads its fgd.conf from."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from fgdtest import FGCTL, FGD, TestFailure, check, run

UNITS = sys.argv[1]
MAX_EXPOSURE = 2.8  # docs/ARCHITECTURE.md, "systemd"
MAX_PUSH_EXPOSURE = 2.0


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
        with open(os.path.join(UNITS, "fgd-push.service")) as f:
            push = f.read()
        m = re.search(r"^ExecStart=(\S+)/fgctl push ", push, re.M)
        check(m, "fgd-push.service does not run fgctl push")
        # push runs unprivileged, as a user fgd's sysusers entry makes, in groups it makes:
        # the socket's and the reader group (fgd(8), ACCESS CONTROL), and with a config file.
        sysusers = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "systemd", "fgd.sysusers")
        with open(sysusers) as f:
            entries = [line.split() for line in f if line.strip() and not line.startswith("#")]
        users = {e[1] for e in entries if e[0] == "u"}
        groups = {e[1] for e in entries if e[0] in ("g", "u")}
        members = {(e[1], e[2]) for e in entries if e[0] == "m"}
        unit = dict(re.findall(r"^(User|Group|SupplementaryGroups)=(.*)$", push, re.M))
        check(unit.get("User") in users and unit.get("Group") in groups,
              f"fgd-push.service runs as {unit}, which fgd.sysusers does not make")
        for g in ("fgd", "fgd-readers"):
            check(g in unit.get("SupplementaryGroups", "").split() and g in groups and
                  (unit["User"], g) in members, f"fgd-push.service's user is not in {g}")
        check(re.search(r"^ExecStart=\S+/fgctl push --config (\S+)/push\.conf ", push, re.M) and
              re.search(r"^ConditionPathExists=\S+/push\.conf$", push, re.M),
              "fgd-push.service does not read push.conf")
        with open(os.path.join(tmp, "fgd-push.service"), "w") as f:
            f.write(push.replace(m.group(1) + "/fgctl", FGCTL))
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", "fgd.socket", "fgd.service",
                            "fgd-push.service"],
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

        # tmpfiles makes the directory fgd reads fgd.conf from, whatever the prefix.
        m = re.search(r"default (\S+)/fgd\.conf\)", subprocess.run(
            [FGD, "--help"], capture_output=True, text=True).stdout)
        with open(os.path.join(UNITS, "fgd.tmpfiles")) as f:
            tmpfiles = f.read()
        check(m and re.search(rf"^d {re.escape(m.group(1))} ", tmpfiles, re.M),
              f"fgd reads {m and m.group(1)}/fgd.conf; tmpfiles makes:\n{tmpfiles}")

        r = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                            os.path.join(UNITS, "fgd-push.service")],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r"Overall exposure level for fgd-push\.service: ([0-9.]+)",
                      r.stdout + r.stderr)
        check(m and float(m.group(1)) <= MAX_PUSH_EXPOSURE,
              f"fgd-push.service's exposure is above {MAX_PUSH_EXPOSURE}:\n{r.stdout}")
        print(f"fgd-push.service exposure level: {m.group(1)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


run(main)
