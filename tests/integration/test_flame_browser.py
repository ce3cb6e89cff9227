#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The flame graph's script, driven in headless chromium.

Renders tests/data/flame-browser.folded with fgtest-render, loads the SVG
from a file:// URL and checks the DOM after each step: load, zoom (with each
tooltip's share of the zoomed frame), reset, search through the Search
control, search through Ctrl-F, the case toggle, the view kept in the URL and
restored from it, and an icicle graph from fgctl render --inverted; then the
same SVG inline in an HTML page, as a blog embeds it (no CDATA section, which
blog engines strip): zoom and reset work there too. Every expected number is
computed here from the fixture.
"""

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webdriver  # noqa: E402
from flamefixture import (  # noqa: E402
    CTRL_F_TERM, SEARCH_BUTTON_TERM, TRUNCATED, ZOOM_ANCESTORS, ZOOM_SIBLINGS, ZOOM_TO,
    ZOOM_UNRELATED, Failure, check, close, fixture_and_renderer, matched_percent, samples_of,
    tree_totals)

SVG_NS = "{http://www.w3.org/2000/svg}"
WIDTH = 1200
XPAD = 10
FULL = WIDTH - 2 * XPAD
HIGHLIGHT = "rgb(230,0,230)"
TITLE = "Browser <test> & co"



# --- the fixture, read independently of the renderer ---

def title_for(name, samples, total):
    return f"{name} ({samples:,} samples, {100 * samples / total:.2f}%)"


def expected_titles(stacks):
    totals = tree_totals(stacks)
    total = totals[()]
    return sorted(title_for(path[-1] if path else "all", n, total) for path, n in totals.items())


def fit(name, width, font_size=12.0, font_width=0.59):
    chars = int(width // (font_size * font_width))
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[:chars - 2] + ".."


# --- the DOM ---

FRAMES_JS = """
return Array.from(document.querySelectorAll("#frames > g.func_g")).map(function (g) {
    var r = g.querySelector("rect"), t = g.querySelector("text");
    var title = g.querySelector("title").textContent;
    return { title: title, name: title.substring(0, title.lastIndexOf(" (")),
             x: parseFloat(r.getAttribute("x")), width: parseFloat(r.getAttribute("width")),
             fill: r.getAttribute("fill"), label: t.textContent,
             display: getComputedStyle(g).display, cls: g.getAttribute("class") };
});
"""

CONTROL_JS = """
var e = document.getElementById(arguments[0]);
return { text: e.textContent, cls: e.getAttribute("class") || "",
         display: getComputedStyle(e).display };
"""

FIND_FRAME_JS = """
var gs = document.querySelectorAll("#frames > g.func_g");
for (var i = 0; i < gs.length; i++)
    if (gs[i].querySelector("title").textContent.indexOf(arguments[0] + " (") === 0)
        return gs[i];
return null;
"""


def frames(s):
    out = {}
    for f in s.execute(FRAMES_JS):
        check(f["name"] not in out, f"frame name {f['name']!r} appears twice; the fixture should avoid that")
        out[f["name"]] = f
    return out


def control(s, ident):
    return s.execute(CONTROL_JS, ident)


def frame_element(s, name):
    el = s.execute(FIND_FRAME_JS, name)
    check(el is not None, f"no frame {name!r} in the DOM")
    return el


def shown(f):
    return f["display"] != "none"


def step_load(s, stacks, initial):
    want = expected_titles(stacks)
    got = sorted(f["title"] for f in initial.values())
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    check(not missing and not extra, f"titles differ from the fixture: missing {missing}, unexpected {extra}")
    check(all(shown(f) for f in initial.values()), "a frame is hidden before any zoom")
    check(close(initial["all"]["width"], FULL, 0.01) and close(initial["all"]["x"], XPAD, 0.01),
          f"root frame is not full width: {initial['all']}")
    total = tree_totals(stacks)[()]
    for name, f in initial.items():
        expect = FULL * samples_of(stacks, name) / total
        check(close(f["width"], expect, 0.011), f"{name!r} is {f['width']} px wide, expected {expect:.2f}")
    check(initial[TRUNCATED]["label"].endswith(".."),
          f"label of {TRUNCATED!r} should be cut at {initial[TRUNCATED]['width']} px, is {initial[TRUNCATED]['label']!r}")
    check(s.execute("return document.getElementById('title').textContent;") == TITLE, "title text is wrong")
    unzoom = control(s, "unzoom")
    check(unzoom["display"] == "none", f"Reset Zoom is visible before zooming: {unzoom}")

    # Hovering shows the frame in the details line.
    s.hover(frame_element(s, "hot_a"))
    details = control(s, "details")["text"]
    want_details = "Function: " + title_for("hot_a", samples_of(stacks, "hot_a"), total)
    check(details == want_details, f"details line after hovering hot_a is {details!r}, expected {want_details!r}")


def step_zoom(s, stacks, initial):
    frame_element(s, ZOOM_TO).click()
    after = frames(s)
    z = after[ZOOM_TO]
    check(shown(z), f"zoomed frame {ZOOM_TO!r} is hidden")
    check(close(z["x"], XPAD, 0.01) and close(z["width"], FULL, 0.01),
          f"zoomed frame {ZOOM_TO!r} is at x={z['x']} width={z['width']}, expected x={XPAD} width={FULL}")
    for name in ZOOM_SIBLINGS + ZOOM_UNRELATED:
        check(not shown(after[name]), f"{name!r} should be hidden after zooming into {ZOOM_TO!r}")
    for name in ZOOM_ANCESTORS:
        check(shown(after[name]), f"ancestor {name!r} should stay shown after zooming into {ZOOM_TO!r}")
        check(close(after[name]["width"], FULL, 0.01), f"ancestor {name!r} should span the width: {after[name]}")
    # Descendants rescale by the zoomed frame's share.
    zs = samples_of(stacks, ZOOM_TO)
    for name in ["hot_a", "hot_b", TRUNCATED]:
        expect = FULL * samples_of(stacks, name) / zs
        check(shown(after[name]), f"descendant {name!r} is hidden after zoom")
        check(close(after[name]["width"], expect, 0.05),
              f"descendant {name!r} is {after[name]['width']} px wide after zoom, expected {expect:.2f}")
    check(close(after["hot_b"]["x"], after["hot_a"]["x"] + after["hot_a"]["width"], 0.05),
          "hot_b does not follow hot_a after zoom")
    # Labels are cut again for the new width.
    label = after[TRUNCATED]["label"]
    check(label == fit(TRUNCATED, after[TRUNCATED]["width"]) and len(label) > len(initial[TRUNCATED]["label"]),
          f"label of {TRUNCATED!r} after zoom is {label!r}, was {initial[TRUNCATED]['label']!r}")
    unzoom = control(s, "unzoom")
    check(unzoom["display"] != "none" and "hide" not in unzoom["cls"].split(),
          f"Reset Zoom is not visible after zooming: {unzoom}")


def step_reset(s, initial):
    s.find("#unzoom").click()
    after = frames(s)
    for name, f in initial.items():
        a = after[name]
        check(shown(a), f"{name!r} is still hidden after Reset Zoom")
        check(a["x"] == f["x"] and a["width"] == f["width"] and a["label"] == f["label"],
              f"{name!r} not restored by Reset Zoom: now {a}, was {f}")
    check(control(s, "unzoom")["display"] == "none", "Reset Zoom still visible after resetting")


def answer_search_prompt(s, term):
    try:
        text = s.wait_for_alert()
    except webdriver.WebDriverError as e:
        raise Failure(f"no search prompt opened ({e.error})") from None
    check("search" in text.lower(), f"the prompt does not ask for a search term: {text!r}")
    s.send_alert_text(term)
    s.accept_alert()


def check_search(s, stacks, initial, term, how):
    after = frames(s)
    rx = re.compile(term)
    for name, f in after.items():
        if rx.search(name):
            check(f["fill"] == HIGHLIGHT, f"{how}: {name!r} matches {term!r} but has fill {f['fill']}")
        else:
            check(f["fill"] == initial[name]["fill"],
                  f"{how}: {name!r} does not match {term!r} but has fill {f['fill']}")
    want = f"Matched: {matched_percent(stacks, term):.1f}%"
    got = control(s, "matched")["text"]
    m = re.fullmatch(r"Matched: ([0-9.]+)%", got)
    # JS rounds halves up where Python rounds them to even; allow that last digit.
    check(m and close(float(m.group(1)), matched_percent(stacks, term), 0.051),
          f"{how}: #matched shows {got!r}, expected {want!r}")
    check(control(s, "search")["text"] == "Reset Search", f"{how}: Search control not showing 'Reset Search'")


def step_search(s, stacks, initial):
    s.find("#search").click()
    answer_search_prompt(s, SEARCH_BUTTON_TERM)
    check_search(s, stacks, initial, SEARCH_BUTTON_TERM, "search via the Search control")
    # A second click clears the search.
    s.find("#search").click()
    after = frames(s)
    for name, f in after.items():
        check(f["fill"] == initial[name]["fill"], f"{name!r} still highlighted after clearing the search")
    check(control(s, "matched")["text"].strip() == "", "#matched not cleared with the search")
    check(control(s, "search")["text"] == "Search", "Search control not back to 'Search'")


def step_ctrl_f(s, stacks, initial):
    s.press_keys(webdriver.KEY_CONTROL, "f")
    answer_search_prompt(s, CTRL_F_TERM)
    check_search(s, stacks, initial, CTRL_F_TERM, "search via Ctrl-F")


def step_zoom_shares(s, stacks):
    """While zoomed, tooltips add their share of the zoomed frame; reset removes it."""
    frame_element(s, ZOOM_TO).click()
    after = frames(s)
    total = tree_totals(stacks)[()]
    zs = samples_of(stacks, ZOOM_TO)
    for name in ["hot_a", ZOOM_TO]:
        n = samples_of(stacks, name)
        want = f"{name} ({n:,} samples, {100 * n / total:.2f}%, {100 * n / zs:.2f}% of zoomed frame)"
        check(after[name]["title"] == want, f"zoomed tooltip of {name!r} is {after[name]['title']!r}, "
                                            f"expected {want!r}")
    # Ancestors keep their plain tooltip.
    check(after["main"]["title"] == title_for("main", samples_of(stacks, "main"), total),
          f"ancestor tooltip changed: {after['main']['title']!r}")
    s.hover(frame_element(s, "hot_b"))
    check("% of zoomed frame)" in control(s, "details")["text"], "details line lacks the zoomed share")
    s.find("#unzoom").click()
    check(frames(s)["hot_a"]["title"] == title_for("hot_a", samples_of(stacks, "hot_a"), total),
          "tooltip not restored by Reset Zoom")


def step_ignore_case(s, stacks, initial):
    # Clear any search from the previous step first.
    if control(s, "search")["text"] == "Reset Search":
        s.find("#search").click()
    s.press_keys(webdriver.KEY_CONTROL, "f")
    answer_search_prompt(s, "HOT_")
    check(control(s, "matched")["text"] == "Matched: 0.0%", "case-sensitive search matched 'HOT_'")
    s.find("#ignorecase").click()
    check("show" in control(s, "ignorecase")["cls"].split(), "ic control not shown as on")
    after = frames(s)
    for name, f in after.items():
        hit = re.search("hot_", name, re.I) is not None
        check((f["fill"] == HIGHLIGHT) == hit, f"ignore-case search: {name!r} fill {f['fill']}")
    got = control(s, "matched")["text"]
    want = matched_percent(stacks, "(?i)hot_")
    check(close(float(re.fullmatch(r"Matched: ([0-9.]+)%", got).group(1)), want, 0.051),
          f"ignore-case matched {got!r}, expected {want:.1f}%")
    # Ctrl-I turns it off again, and the search re-runs case-sensitively.
    s.press_keys(webdriver.KEY_CONTROL, "i")
    check("show" not in control(s, "ignorecase")["cls"].split(), "Ctrl-I did not toggle ic off")
    check(control(s, "matched")["text"] == "Matched: 0.0%", "search not re-run after Ctrl-I")
    s.find("#search").click()


def step_url_state(s, stacks, svg):
    """Zoom and search land in the URL; loading that URL shows the same view."""
    frame_element(s, ZOOM_TO).click()
    s.find("#search").click()
    answer_search_prompt(s, "hot_")
    url = s.execute("return window.location.href;")
    q = dict(p.split("=", 1) for p in url.split("?", 1)[1].split("&")) if "?" in url else {}
    zoomed = frames(s)[ZOOM_TO]
    check(q.get("s") == "hot_" and "x" in q and "y" in q, f"URL does not hold the view: {url}")
    s.navigate("file://" + svg)  # a fresh page without the query
    check(frames(s)["init"]["display"] != "none", "a plain load is zoomed")
    s.navigate(url)
    after = frames(s)
    check(close(after[ZOOM_TO]["x"], XPAD, 0.01) and close(after[ZOOM_TO]["width"], FULL, 0.01),
          f"zoom not restored from {url}: {after[ZOOM_TO]}")
    check(not shown(after["init"]), "unrelated frames shown after restoring the zoom")
    check(after["hot_a"]["fill"] == HIGHLIGHT and control(s, "search")["text"] == "Reset Search",
          "search not restored from the URL")
    check(zoomed["width"] == after[ZOOM_TO]["width"], "restored zoom differs")
    s.find("#unzoom").click()
    s.find("#search").click()
    url = s.execute("return window.location.href;")
    check("?" not in url, f"URL keeps state after reset: {url}")


def step_icicle(s, stacks, tmp, fixture):
    svg = os.path.join(tmp, "icicle.svg")
    fgctl = os.environ.get("FGCTL", "fgctl")
    p = subprocess.run([fgctl, "render", "--inverted", "-q", fixture, "-o", svg], capture_output=True, timeout=60)
    check(p.returncode == 0, f"fgctl render --inverted failed: {p.stderr!r}")
    s.navigate("file://" + svg)
    init = frames(s)
    ys = {n: s.execute("var g = arguments[0]; return parseFloat(g.querySelector('rect').getAttribute('y'));",
                       frame_element(s, n)) for n in ("all", "main", "run", "process", ZOOM_TO)}
    check(ys["all"] < ys["main"] < ys["run"] < ys["process"] < ys[ZOOM_TO], f"icicle is not top-down: {ys}")
    frame_element(s, ZOOM_TO).click()
    after = frames(s)
    check(close(after[ZOOM_TO]["width"], FULL, 0.01), "zoom in the icicle graph")
    for name in ZOOM_UNRELATED:
        check(not shown(after[name]), f"{name!r} shown after zooming the icicle graph")
    check(shown(after["hot_a"]) and close(after["hot_a"]["width"],
                                          FULL * samples_of(stacks, "hot_a") / samples_of(stacks, ZOOM_TO), 0.05),
          "hot_a not rescaled in the icicle graph")
    check(init["all"]["title"] == after["all"]["title"], "root tooltip changed")


def main():
    render, fixture, stacks = fixture_and_renderer()

    with tempfile.TemporaryDirectory(prefix="fg-flame-browser-") as tmp:
        svg = os.path.join(tmp, "flame.svg")
        with open(svg, "wb") as out:
            p = subprocess.run([render, "-t", TITLE, "-i", "event: cpu-clock  frequency: 99 Hz", fixture],
                               stdout=out, stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0 or p.stderr:
            print(f"FAIL: fgtest-render exited {p.returncode}: {p.stderr.decode(errors='replace')}",
                  file=sys.stderr)
            return 1
        # A strict XML parser must accept it.
        try:
            root = ET.parse(svg).getroot()
        except ET.ParseError as e:
            print(f"FAIL: the SVG is not well-formed XML: {e}", file=sys.stderr)
            return 1
        if root.tag != SVG_NS + "svg":
            print(f"FAIL: root element is {root.tag}", file=sys.stderr)
            return 1

        steps = [
            ("(a) load", lambda s, i: step_load(s, stacks, i)),
            ("(b) zoom", lambda s, i: step_zoom(s, stacks, i)),
            ("(c) reset zoom", lambda s, i: step_reset(s, i)),
            ("(d) search control", lambda s, i: step_search(s, stacks, i)),
            ("(e) Ctrl-F", lambda s, i: step_ctrl_f(s, stacks, i)),
            ("(f) zoomed shares", lambda s, i: step_zoom_shares(s, stacks)),
            ("(g) ignore case", lambda s, i: step_ignore_case(s, stacks, i)),
            ("(h) URL state", lambda s, i: step_url_state(s, stacks, svg)),
            ("(i) icicle", lambda s, i: step_icicle(s, stacks, tmp, fixture)),
        ]
        with webdriver.chromium_session() as s:
            s.set_window_size(1400, 900)
            s.navigate("file://" + svg)
            initial = frames(s)
            for name, step in steps:
                try:
                    step(s, initial)
                except (Failure, webdriver.WebDriverError) as e:
                    print(f"FAIL {name}: {e}", file=sys.stderr)
                    return 1
                print(f"ok   {name}")
            # (j) The same SVG inline in an HTML page, as a blog embeds it: it has no
            # CDATA section for an engine to strip, and its script needs none, so the
            # page's HTML parser gives it the same graph, which zooms and resets.
            with open(svg, encoding="utf-8") as f:
                markup = f.read()
            check("<![CDATA[" not in markup, "the SVG still has a CDATA section")
            page = os.path.join(tmp, "blog.html")
            with open(page, "w", encoding="utf-8") as f:
                f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>A post</title>"
                        "</head><body><p>What burned the CPU:</p>\n" +
                        markup[markup.index("<svg"):] + "\n<p>The end.</p></body></html>\n")
            s.navigate("file://" + page)
            try:
                inline = frames(s)
                check(inline.keys() == initial.keys(), "the inline graph has other frames")
                step_zoom(s, stacks, inline)
                step_reset(s, inline)
            except (Failure, webdriver.WebDriverError) as e:
                print(f"FAIL (j) inline in HTML: {e}", file=sys.stderr)
                return 1
            print("ok   (j) inline in an HTML page: zoom and reset")
            # (k) A graph taller than the window opens at its base, where the roots are.
            tall = os.path.join(tmp, "tall.folded")
            with open(tall, "w") as f:
                f.write(";".join(["app"] + [f"deep{i}" for i in range(150)]) + " 10\n")
            tall_svg = os.path.join(tmp, "tall.svg")
            with open(tall_svg, "wb") as out:
                subprocess.run([render, tall], stdout=out, check=True, timeout=60)
            s.set_window_size(1280, 700)
            s.navigate("file://" + tall_svg)
            root = s.execute(ROOT_IN_VIEW_JS)
            try:
                check(root["scrolled"] > 0 and 0 <= root["top"] and root["bottom"] <= root["view"],
                      f"the tall graph's root frame is not in view: {root}")
            except Failure as e:
                print(f"FAIL (k) tall graph: {e}", file=sys.stderr)
                return 1
            print(f"ok   (k) a tall graph opens at its base (scrolled {root['scrolled']} px)")
    return 0


# Where the root frame ("app", the lowest) is against the window, once loaded.
ROOT_IN_VIEW_JS = """
var gs = document.querySelectorAll("#frames > g"), root = null;
for (var i = 0; i < gs.length; i++)
    if (gs[i].querySelector("title").textContent.indexOf("app (") === 0) root = gs[i];
var r = root.getBoundingClientRect();
return { top: r.top, bottom: r.bottom, view: window.innerHeight, scrolled: window.scrollY };
"""


if __name__ == "__main__":
    sys.exit(main())
