# SPDX-License-Identifier: LGPL-2.1-or-later
"""A flame graph recorded by the real fgd works in a real browser: click hot_a
and it fills the width; search for hot_b and its frames light up with about
25% matched (fgtest-burn's known share)."""

import os
import re
import tempfile

import webdriver
from fgdtest import Daemon, check, require_root, run, workload

FULL = 1200 - 2 * 10
HIGHLIGHT = "rgb(230,0,230)"

FRAME_JS = """
var gs = document.querySelectorAll("#frames > g.func_g");
for (var i = 0; i < gs.length; i++)
    if (gs[i].querySelector("title").textContent.indexOf(arguments[0] + " (") === 0)
        return gs[i];
return null;
"""

RECT_JS = """
var r = arguments[0].querySelector("rect");
return { width: parseFloat(r.getAttribute("width")), fill: r.getAttribute("fill"),
         display: getComputedStyle(arguments[0]).display };
"""


def test():
    require_root()
    with tempfile.TemporaryDirectory() as tmp, Daemon() as d, workload("fgtest-burn") as w:
        svg = os.path.join(tmp, "burn.svg")
        d.fgctl("record", "-p", w.pid, "-t", "3", "-F", "999", "-o", svg, check_rc=0)
        with webdriver.chromium_session() as s:
            s.navigate("file://" + svg)
            hot_a = s.execute(FRAME_JS, "hot_a")
            hot_b = s.execute(FRAME_JS, "hot_b")
            check(hot_a is not None and hot_b is not None, "hot_a or hot_b missing from the DOM")
            before = s.execute(RECT_JS, hot_a)
            check(0.6 * FULL < before["width"] < 0.9 * FULL, f"hot_a width {before['width']} is not ~75%")

            hot_a.click()
            after = s.execute(RECT_JS, hot_a)
            check(abs(after["width"] - FULL) < 1, f"zoomed hot_a is {after['width']} px, not {FULL}")
            check(s.execute(RECT_JS, hot_b)["display"] == "none", "hot_b still shown after zooming hot_a")
            s.find("#unzoom").click()
            check(abs(s.execute(RECT_JS, hot_a)["width"] - before["width"]) < 0.01, "reset did not restore")

            s.find("#search").click()
            s.wait_for_alert()
            s.send_alert_text("hot_b")
            s.accept_alert()
            check(s.execute(RECT_JS, hot_b)["fill"] == HIGHLIGHT, "hot_b not highlighted")
            check(s.execute(RECT_JS, hot_a)["fill"] != HIGHLIGHT, "hot_a highlighted by a search for hot_b")
            matched = s.execute("return document.getElementById('matched').textContent;")
            m = re.fullmatch(r"Matched: ([0-9.]+)%", matched)
            check(m and 20 <= float(m.group(1)) <= 30, f"matched {matched!r}, expected about 25%")


run(test)
