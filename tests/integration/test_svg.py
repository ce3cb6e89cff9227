# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl record -o x.svg writes a well-formed, self-contained SVG naming the hot
functions, with the recording's details in it; -o x.html the HTML page."""

import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET

from fgdtest import Daemon, check, require_root, run, workload

SVG = "{http://www.w3.org/2000/svg}"


def test():
    require_root()
    with tempfile.TemporaryDirectory() as tmp, Daemon() as d, workload("fgtest-burn") as w:
        out = os.path.join(tmp, "x.svg")
        d.fgctl("record", "-p", w.pid, "-t", "2", "-F", "999", "-o", out, "--title", "burn <test> & co",
                check_rc=0)
        check(not any(n.endswith(".tmp") for n in os.listdir(tmp)), "temporary file left behind")
        root = ET.parse(out).getroot()  # raises on malformed XML
        check(root.tag == SVG + "svg", f"root element is {root.tag}")
        text = open(out, encoding="utf-8").read()
        check("http://" not in text.replace("http://www.w3.org", "") and "https://" not in text,
              "the SVG refers to an external resource")
        titles = [t.text or "" for t in root.iter(SVG + "title")]
        check(any(t.startswith("hot_a ") for t in titles), "no frame titled hot_a")
        check(any(t.startswith("hot_b ") for t in titles), "no frame titled hot_b")
        check(any(t.startswith("main ") for t in titles), "no frame titled main")
        texts = " ".join("".join(t.itertext()) for t in root.iter(SVG + "text"))
        check("burn <test> & co" in texts, "the title is missing or mis-escaped")
        check("cpu-clock" in texts or "cycles" in texts, "the event is not in the details")
        check("samples:" in texts and "lost:" in texts, "sample and loss figures are not in the details")
        check(root.find(f".//{SVG}script") is not None, "no script: the SVG is not interactive")

        # Folded by extension, and --format overriding it.
        out2 = os.path.join(tmp, "x.folded")
        d.fgctl("record", "-p", w.pid, "-t", "1", "-o", out2, check_rc=0)
        check(open(out2).read().startswith("fgtest-burn;"), ".folded output is not folded text")
        out3 = os.path.join(tmp, "y.txt")
        d.fgctl("record", "-p", w.pid, "-t", "1", "-o", out3, "--format", "svg", check_rc=0)
        check(open(out3).read().lstrip().startswith("<?xml"), "--format svg ignored")

        # The HTML page, rendered by the daemon from the same recording model.
        out4 = os.path.join(tmp, "x.html")
        d.fgctl("record", "-p", w.pid, "-t", "1", "-F", "999", "-o", out4, check_rc=0)
        page = open(out4, encoding="utf-8").read()
        check(page.lstrip().lower().startswith("<!doctype html>"), "x.html is not an HTML page")
        check("http://" not in page and "https://" not in page, "the page refers to an external resource")
        m = re.search(r'<script type="application/json" id="fg-data">(.*?)</script>', page, re.S)
        check(m is not None, "no embedded data in the page")
        data = json.loads(m.group(1))
        check("hot_a" in data["names"] and "main" in data["names"], "hot_a or main missing from the page")
        check("cpu-clock" in page or "cycles" in page, "the event is not in the page's details")


run(test)
