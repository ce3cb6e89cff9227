#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The HTML flame graph (canvas + function table), driven in headless chromium.

Renders tests/data/flame-browser.folded with `fgtest-render -f html`, loads
the page from a file:// URL and checks it after each step: load, the table's
numbers, hover, zoom by clicking the canvas, reset, search through the
Search button and Ctrl-F, the case toggle, the view restored from the URL,
table sorting, filtering and row clicks. Every expected number is computed
here from the fixture. The canvas is inspected through the page's test
hooks (window.fgFlame, see common/render/flame-html.c); clicks and hovers are real
pointer events at the coordinates the hooks report.

Last, a generated profile of 200,000 stacks is rendered and loaded, and the
time to load and draw it is reported (with only a generous bound). Then the
layout: at 1280 px and narrower the table goes below the graph; below 1280
px the graph narrows to the window, keeping the toolbar on screen and its
zoom and search through a resize; and a graph taller than the window opens
at its base, an icicle graph at its top.
"""

import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webdriver  # noqa: E402
from fgdtest import FGCTL  # noqa: E402
from flamefixture import (  # noqa: E402
    CTRL_F_TERM, SEARCH_BUTTON_TERM, TRUNCATED, ZOOM_ANCESTORS, ZOOM_SIBLINGS, ZOOM_TO,
    ZOOM_UNRELATED, Failure, check, close, fixture_and_renderer, matched_percent, samples_of,
    tree_totals)

WIDTH = 1200
XPAD = 10
FULL = WIDTH - 2 * XPAD
HIGHLIGHT = "rgb(230,0,230)"
TITLE = "Browser <test> & co"

CASE_TERM = "HOT_"
ROW_CLICK = "hot_b"
FILTER = "HOT"

BIG_STACKS = 200000
BIG_LOAD_BOUND_S = 60

NARROW_WIDTHS = (1024, 800, 600)
DEEP = 150
DEEP_ZOOM_TO = "level_100"


# --- the fixture, read independently of the renderer ---

def function_table(stacks):
    """{name: (self, total)}, a sample counted once in a total however often the name recurs."""
    out = {}
    for frames, n in stacks:
        for name in set(frames):
            s, t = out.get(name, (0, 0))
            out[name] = (s, t + n)
        s, t = out[frames[-1]]
        out[frames[-1]] = (s + n, t)
    return out


def fit(name, width, font_size=12.0, font_width=0.59):
    chars = int(width // (font_size * font_width))
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[:chars - 2] + ".."


def fmt_count(n):
    return f"{n:,}"


# --- the page ---

ROWS_JS = """
return Array.from(document.querySelectorAll("#table tbody tr")).map(function (tr) {
    return { name: tr.getAttribute("data-name"), self: parseFloat(tr.getAttribute("data-self")),
             total: parseFloat(tr.getAttribute("data-total")), cls: tr.className,
             cells: Array.from(tr.cells).map(function (td) { return td.textContent; }) };
});
"""

CONTROL_JS = """
var e = document.getElementById(arguments[0]);
return { text: e.textContent, cls: e.getAttribute("class") || "", hidden: e.hidden,
         display: getComputedStyle(e).display, pressed: e.getAttribute("aria-pressed") };
"""


def frames(s):
    out = {}
    for f in s.execute("return window.fgFlame.frames();"):
        check(f["name"] not in out, f"frame {f['name']!r} drawn twice; the fixture should avoid that")
        out[f["name"]] = f
    return out


def state(s):
    return s.execute("return window.fgFlame.state();")


def control(s, ident):
    return s.execute(CONTROL_JS, ident)


def rows(s):
    return s.execute(ROWS_JS)


def frame_point(s, name):
    r = s.execute("return window.fgFlame.frameRect(arguments[0]);", name)
    check(r is not None, f"frame {name!r} is not drawn")
    return int(round(r["cx"])), int(round(r["cy"]))


def pointer(s, x, y, click=False):
    actions = [{"type": "pointerMove", "duration": 0, "origin": "viewport", "x": x, "y": y}]
    if click:
        actions += [{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]
    s.perform_actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                        "actions": actions}])


def click_frame(s, name):
    x, y = frame_point(s, name)
    pointer(s, x, y, click=True)


def url_query(s):
    return s.execute("return window.location.search;")


def answer_search_prompt(s, term):
    try:
        text = s.wait_for_alert()
    except webdriver.WebDriverError as e:
        raise Failure(f"no search prompt opened ({e.error})") from None
    check("search" in text.lower(), f"the prompt does not ask for a search term: {text!r}")
    s.send_alert_text(term)
    s.accept_alert()


def check_matched(s, want, how):
    got = control(s, "matched")["text"]
    m = re.fullmatch(r"Matched: ([0-9.]+)%", got)
    check(m and close(float(m.group(1)), want, 0.051), f"{how}: #matched shows {got!r}, expected {want:.1f}%")


def check_search(s, stacks, initial, term, how, flags=0):
    rx = re.compile(term, flags)
    for name, f in frames(s).items():
        if rx.search(name):
            check(f["fill"] == HIGHLIGHT, f"{how}: {name!r} matches {term!r} but is drawn {f['fill']}")
        else:
            check(f["fill"] == initial[name]["fill"], f"{how}: {name!r} does not match {term!r} but is drawn {f['fill']}")
    check_matched(s, matched_percent(stacks, term, flags), how)
    check(control(s, "search")["text"] == "Reset Search", f"{how}: Search button not showing 'Reset Search'")
    check(state(s)["search"] == term, f"{how}: state has search {state(s)['search']!r}")


# --- the steps ---

def step_load(s, stacks, initial):
    total = tree_totals(stacks)[()]
    want_names = {path[-1] if path else "all" for path in tree_totals(stacks)}
    check(set(initial) == want_names, f"frames drawn differ: missing {sorted(want_names - set(initial))}, "
          f"unexpected {sorted(set(initial) - want_names)}")
    check(close(initial["all"]["width"], FULL, 0.01) and close(initial["all"]["x"], XPAD, 0.01),
          f"root frame is not full width: {initial['all']}")
    for name, f in initial.items():
        expect = FULL * samples_of(stacks, name) / total
        check(close(f["width"], expect, 0.01), f"{name!r} is {f['width']} px wide, expected {expect:.2f}")
        check(not f["faded"], f"{name!r} is faded before any zoom")
        check(f["label"] == fit(name, f["width"]), f"label of {name!r} is {f['label']!r}")
    check(initial[TRUNCATED]["label"].endswith(".."), f"label of {TRUNCATED!r} is not cut: {initial[TRUNCATED]}")
    # Children sit on their parents: hot_b right after hot_a, both within compute.
    check(close(initial["hot_b"]["x"], initial["hot_a"]["x"] + initial["hot_a"]["width"], 0.01),
          "hot_b does not follow hot_a")
    check(initial["compute"]["y"] > initial["hot_a"]["y"], "a flame graph grows upwards")
    check(s.execute("return document.getElementById('title').textContent;") == TITLE, "title text is wrong")
    check(s.title() == TITLE, f"document title is {s.title()!r}")
    check(control(s, "unzoom")["display"] == "none", "Reset Zoom is visible before zooming")
    # The canvas is drawn at the device pixel ratio.
    c = s.execute("var c = document.getElementById('flame'); return [c.width, c.clientWidth, "
                  "window.devicePixelRatio];")
    check(c[0] == round(c[1] * c[2]) and c[1] == WIDTH, f"canvas backing store {c} does not follow the ratio")

    # The table: every function, self and total as computed from the fixture.
    table = function_table(stacks)
    got = {r["name"]: (r["self"], r["total"]) for r in rows(s)}
    check(got == {k: (float(a), float(b)) for k, (a, b) in table.items()},
          f"table differs from the fixture: {sorted(set(got.items()) ^ set(table.items()))[:6]}")
    first = rows(s)[0]
    check(first["cells"][2] == f"{100 * first['self'] / total:.2f}%", f"self % cell of the first row: {first}")
    check(s.execute("return document.getElementById('tablenote').textContent;")
          == f"Showing {len(table)} of {len(table)} functions", "table note is wrong")
    # By self, descending, to begin with.
    selfs = [r["self"] for r in rows(s)]
    check(selfs == sorted(selfs, reverse=True), f"the table is not sorted by self: {selfs}")

    # Hovering shows the frame in the details line.
    x, y = frame_point(s, "hot_a")
    pointer(s, x, y)
    want = f"Function: hot_a ({fmt_count(samples_of(stacks, 'hot_a'))} samples, " \
           f"{100 * samples_of(stacks, 'hot_a') / total:.2f}%)"
    details = control(s, "details")["text"]
    check(details == want, f"details after hovering hot_a: {details!r}, expected {want!r}")


def step_zoom(s, stacks, initial):
    click_frame(s, ZOOM_TO)
    after = frames(s)
    z = after[ZOOM_TO]
    check(close(z["x"], XPAD, 0.01) and close(z["width"], FULL, 0.01) and not z["faded"],
          f"zoomed frame is {z}, expected full width")
    for name in ZOOM_SIBLINGS + ZOOM_UNRELATED:
        check(name not in after, f"{name!r} still drawn after zooming into {ZOOM_TO!r}")
    for name in ZOOM_ANCESTORS:
        check(name in after and after[name]["faded"] and close(after[name]["width"], FULL, 0.01),
              f"ancestor {name!r} should be a faded full-width bar: {after.get(name)}")
    zs = samples_of(stacks, ZOOM_TO)
    for name in ["hot_a", "hot_b", TRUNCATED]:
        expect = FULL * samples_of(stacks, name) / zs
        check(name in after and close(after[name]["width"], expect, 0.01),
              f"descendant {name!r} after zoom: {after.get(name)}, expected width {expect:.2f}")
    label = after[TRUNCATED]["label"]
    check(label == fit(TRUNCATED, after[TRUNCATED]["width"]) and len(label) > len(initial[TRUNCATED]["label"]),
          f"label of {TRUNCATED!r} after zoom is {label!r}")
    check(control(s, "unzoom")["display"] != "none", "Reset Zoom is not visible after zooming")
    st = state(s)
    check(st["zoomed"] == initial[ZOOM_TO]["index"], f"state after zoom: {st}")
    check(f"n={st['zoomed']}" in url_query(s), f"zoom is not in the URL: {url_query(s)!r}")
    # Hover in the zoomed view adds the share of the zoomed frame.
    x, y = frame_point(s, "hot_b")
    pointer(s, x, y)
    total = tree_totals(stacks)[()]
    hb = samples_of(stacks, "hot_b")
    want = f"Function: hot_b ({hb} samples, {100 * hb / total:.2f}%, {100 * hb / zs:.2f}% of zoomed frame)"
    check(control(s, "details")["text"] == want, f"details in the zoomed view: {control(s, 'details')['text']!r}, "
          f"expected {want!r}")
    # Clicking a faded ancestor zooms out to it.
    click_frame(s, "process")
    after = frames(s)
    check("io" in after and close(after["process"]["width"], FULL, 0.01) and not after["process"]["faded"],
          "clicking the ancestor 'process' did not zoom to it")
    click_frame(s, ZOOM_TO)


def step_reset(s, initial):
    s.find("#unzoom").click()
    after = frames(s)
    for name, f in initial.items():
        a = after.get(name)
        check(a is not None and a["x"] == f["x"] and a["width"] == f["width"] and a["label"] == f["label"]
              and not a["faded"], f"{name!r} not restored by Reset Zoom: now {a}, was {f}")
    check(control(s, "unzoom")["display"] == "none", "Reset Zoom still visible after resetting")
    check("n=" not in url_query(s), f"zoom still in the URL: {url_query(s)!r}")


def step_search(s, stacks, initial):
    s.find("#search").click()
    answer_search_prompt(s, SEARCH_BUTTON_TERM)
    check_search(s, stacks, initial, SEARCH_BUTTON_TERM, "search via the Search button")
    s.find("#search").click()
    for name, f in frames(s).items():
        check(f["fill"] == initial[name]["fill"], f"{name!r} still highlighted after clearing the search")
    check(control(s, "matched")["text"].strip() == "", "#matched not cleared with the search")
    check(control(s, "search")["text"] == "Search", "Search button not back to 'Search'")
    check("s=" not in url_query(s), f"search still in the URL: {url_query(s)!r}")


def step_ctrl_f(s, stacks, initial):
    s.press_keys(webdriver.KEY_CONTROL, "f")
    answer_search_prompt(s, CTRL_F_TERM)
    check_search(s, stacks, initial, CTRL_F_TERM, "search via Ctrl-F")


def step_case(s, stacks, initial):
    s.find("#search").click()  # reset
    s.find("#search").click()
    answer_search_prompt(s, CASE_TERM)
    check_matched(s, 0.0, "case-sensitive search for " + CASE_TERM)
    check(all(f["fill"] != HIGHLIGHT for f in frames(s).values()), "a frame matched a case-sensitive HOT_")
    s.find("#ignorecase").click()
    ic = control(s, "ignorecase")
    check("show" in ic["cls"].split() and ic["pressed"] == "true", f"#ignorecase not shown as on: {ic}")
    check_search(s, stacks, initial, CASE_TERM, "search ignoring case", re.IGNORECASE)
    check("i=1" in url_query(s), f"the case toggle is not in the URL: {url_query(s)!r}")
    s.press_keys(webdriver.KEY_CONTROL, "i")
    check(not state(s)["ignorecase"], "Ctrl-I did not turn ignoring case off")
    check_matched(s, 0.0, "after Ctrl-I")


def step_url(s, stacks, initial, url):
    # Zoom, search ignoring case, then load the page's URL afresh.
    s.find("#search").click()
    click_frame(s, ZOOM_TO)
    s.find("#ignorecase").click()
    s.find("#search").click()
    answer_search_prompt(s, CASE_TERM)
    query = url_query(s)
    check(re.search(r"(^\?|&)n=\d+", query) and "s=HOT_" in query and "i=1" in query,
          f"the URL does not hold the view: {query!r}")
    before = frames(s)
    s.navigate(url + query)
    st = state(s)
    check(st["zoomed"] == initial[ZOOM_TO]["index"] and st["search"] == CASE_TERM and st["ignorecase"],
          f"view not restored from {query!r}: {st}")
    after = frames(s)
    check({k: (v["x"], v["width"], v["fill"], v["faded"]) for k, v in after.items()}
          == {k: (v["x"], v["width"], v["fill"], v["faded"]) for k, v in before.items()},
          "the restored view draws differently")
    check_matched(s, matched_percent(stacks, CASE_TERM, re.IGNORECASE), "restored search")
    check(control(s, "unzoom")["display"] != "none", "Reset Zoom hidden in the restored zoomed view")
    check(control(s, "ignorecase")["pressed"] == "true", "#ignorecase not on in the restored view")
    # Back to a plain view for the table.
    s.navigate(url)


def step_table(s, stacks, initial):
    table = function_table(stacks)
    s.find('#table th[data-key="total"]').click()
    totals = [r["total"] for r in rows(s)]
    check(totals == sorted(totals, reverse=True), f"not sorted by total, descending: {totals}")
    check(s.find('#table th[data-key="total"]').attribute("aria-sort") == "descending", "aria-sort not set")
    s.find('#table th[data-key="total"]').click()
    totals = [r["total"] for r in rows(s)]
    check(totals == sorted(totals), f"second click does not sort ascending: {totals}")
    s.find('#table th[data-key="name"]').click()
    names = [r["name"] for r in rows(s)]
    check(names == sorted(names), f"not sorted by name: {names}")

    s.find("#filter").send_keys(FILTER)
    names = sorted(r["name"] for r in rows(s))
    want = sorted(n for n in table if FILTER.lower() in n.lower())
    check(names == want, f"filter {FILTER!r} shows {names}, expected {want}")

    for r in s.find_all("#table tbody tr"):
        if r.attribute("data-name") == ROW_CLICK:
            r.click()
            break
    else:
        raise Failure(f"no row for {ROW_CLICK!r}")
    sel = [r["name"] for r in rows(s) if "selected" in r["cls"].split()]
    check(sel == [ROW_CLICK], f"selected rows after clicking {ROW_CLICK!r}: {sel}")
    check(state(s)["search"] == f"^{ROW_CLICK}$", f"row click searched {state(s)['search']!r}")
    for name, f in frames(s).items():
        want_fill = HIGHLIGHT if name == ROW_CLICK else initial[name]["fill"]
        check(f["fill"] == want_fill, f"after the row click {name!r} is drawn {f['fill']}")
    check_matched(s, 100 * table[ROW_CLICK][1] / tree_totals(stacks)[()], "row click")


# --- a big profile ---

def big_profile(path, n):
    rnd = random.Random(1)
    vocab = [f"func_{i:04d}" for i in range(3000)]
    with open(path, "w", encoding="ascii") as f:
        for i in range(n):
            depth = rnd.randint(4, 28)
            frames = ["main", f"worker_{i % 16}"] + [rnd.choice(vocab[:50 * (d + 1)]) for d in range(depth)]
            f.write(";".join(frames) + f" {rnd.randint(1, 100)}\n")


def step_big(s, render, tmp):
    folded = os.path.join(tmp, "big.folded")
    html = os.path.join(tmp, "big.html")
    big_profile(folded, BIG_STACKS)
    t = time.monotonic()
    with open(html, "wb") as out:
        subprocess.run([render, "-f", "html", folded], stdout=out, check=True, timeout=300)
    render_s = time.monotonic() - t
    size = os.path.getsize(html)
    t = time.monotonic()
    s.navigate("file://" + html)
    nav_s = time.monotonic() - t
    st = state(s)
    load_ms = s.execute("return window.fgFlame.loadMs;")
    draw_ms = s.execute("return window.fgFlame.drawMs;")
    drawn = s.execute("return window.fgFlame.frames().length;")
    check(st["frames"] > 1000 and drawn > 100, f"big profile: {st['frames']} frames, {drawn} drawn")
    check(len(rows(s)) == 500, "big profile: the table should show its first 500 rows")
    # Zoom into a worker and time the redraw.
    click_frame(s, "worker_3")
    zoom_draw_ms = s.execute("return window.fgFlame.drawMs;")
    check(state(s)["zoomed"] > 0, "big profile: zooming into worker_3 failed")
    print(f"     big profile: {BIG_STACKS} stacks, {size / 1e6:.1f} MB, {st['frames']} frames in the page, "
          f"{drawn} drawn; render {render_s:.2f} s, navigate {nav_s:.2f} s, script set-up {load_ms:.0f} ms, "
          f"draw {draw_ms:.0f} ms, zoomed draw {zoom_draw_ms:.0f} ms")
    check(nav_s < BIG_LOAD_BOUND_S, f"big profile took {nav_s:.1f} s to load")


# --- narrower windows, and a tall graph ---

# Where the toolbar's buttons and the canvas are, in the viewport, and how wide the viewport is.
BOXES_JS = """
var out = { viewport: window.innerWidth, canvas_css: document.getElementById("flame").clientWidth };
["search", "ignorecase", "unzoom", "flame"].forEach(function (id) {
    var r = document.getElementById(id).getBoundingClientRect();
    out[id] = { left: r.left, right: r.right, width: r.width };
});
return out;
"""


def boxes(s):
    return s.execute(BOXES_JS)


def wait_for(s, script, want, what, timeout=10):
    """Polls script until it returns want: a resize is redrawn on the browser's next frames."""
    deadline = time.monotonic() + timeout
    while True:
        got = s.execute(script)
        if got == want:
            return
        if time.monotonic() > deadline:
            raise Failure(f"{what}: still {got!r} after {timeout} s, expected {want!r}")
        time.sleep(0.05)


def check_on_screen(box, ident, width):
    b = box[ident]
    check(b["width"] > 0 and b["left"] >= 0 and b["right"] <= box["viewport"],
          f"at {width} px #{ident} spans x {b['left']:.0f}-{b['right']:.0f}, "
          f"outside the viewport's {box['viewport']} px")


def step_narrow(s, url, initial, width):
    s.set_window_size(width, 900)
    s.navigate(url)
    box = boxes(s)
    check(box["canvas_css"] <= box["viewport"] and box["flame"]["right"] <= box["viewport"],
          f"at {width} px the canvas is {box['canvas_css']} px wide, ending at x "
          f"{box['flame']['right']:.0f}; the viewport is {box['viewport']} px")
    check_on_screen(box, "search", width)
    check_on_screen(box, "ignorecase", width)
    c = s.execute("var c = document.getElementById('flame'); return [c.width, c.clientWidth, "
                  "window.devicePixelRatio];")
    check(c[0] == round(c[1] * c[2]), f"at {width} px the canvas backing store {c} does not follow the ratio")
    full = box["canvas_css"] - 2 * XPAD
    root = frames(s)["all"]
    check(close(root["x"], XPAD, 0.01) and close(root["width"], full, 0.01),
          f"at {width} px the root frame is {root}, expected {full} px wide")
    # Clicking a frame still zooms, and Reset Zoom shows on screen.
    click_frame(s, ZOOM_TO)
    z = frames(s)[ZOOM_TO]
    check(state(s)["zoomed"] == initial[ZOOM_TO]["index"] and close(z["width"], full, 0.01),
          f"at {width} px clicking {ZOOM_TO!r} did not zoom to it: {state(s)}, {z}")
    check_on_screen(boxes(s), "unzoom", width)
    s.find("#unzoom").click()
    check(state(s)["zoomed"] == 0, f"at {width} px Reset Zoom did not reset")
    return box


def step_resize(s, url, initial):
    """A view zoomed and searched keeps both through a resize; frames scale to the new width."""
    canvas_width = "return document.getElementById('flame').clientWidth;"
    s.set_window_size(1280, 900)
    s.navigate(url + f"?n={initial[ZOOM_TO]['index']}&s={CASE_TERM}&i=1")
    before, st = frames(s), state(s)
    for width in (800, 1280):
        s.set_window_size(width, 900)
        want = min(WIDTH, s.execute("return document.getElementById('layout').clientWidth;"))
        wait_for(s, canvas_width, want, f"the canvas after resizing the window to {width} px")
        after = frames(s)
        check(state(s) == st, f"at {width} px the view changed in the resize: {state(s)}, was {st}")
        scale = (want - 2 * XPAD) / (WIDTH - 2 * XPAD)
        for name, f in before.items():
            a = after.get(name)
            check(a is not None and close(a["x"] - XPAD, (f["x"] - XPAD) * scale, 0.01)
                  and close(a["width"], f["width"] * scale, 0.01) and a["fill"] == f["fill"]
                  and a["faded"] == f["faded"],
                  f"at {width} px {name!r} is drawn {a}; before the resize {f}")


def deep_profile(path):
    """One chain DEEP frames deep, and a branch halfway up it."""
    chain = [f"level_{d:03d}" for d in range(DEEP)]
    with open(path, "w", encoding="ascii") as f:
        f.write(";".join(["main"] + chain) + " 90\n")
        f.write(";".join(["main"] + chain[:DEEP // 2] + ["side"]) + " 10\n")


ROW_JS = """
var r = window.fgFlame.frameRect(arguments[0]);
return { scroll: window.scrollY, viewport: window.innerHeight, page: document.documentElement.scrollHeight,
         top: r && r.y, bottom: r && r.y + r.height };
"""


def row_of(s, name):
    return s.execute(ROW_JS, name)


def step_tall(s, tmp):
    folded = os.path.join(tmp, "deep.folded")
    deep_profile(folded)
    pages = {}
    for kind, args in (("flame", []), ("icicle", ["--inverted"])):
        pages[kind] = os.path.join(tmp, f"deep-{kind}.html")
        subprocess.run([FGCTL, "render", folded, "-f", "html", "-o", pages[kind]] + args, check=True,
                       timeout=60, capture_output=True)
    s.set_window_size(1280, 900)
    s.navigate("file://" + pages["flame"])
    r = row_of(s, "all")
    check(r["page"] > 2 * r["viewport"], f"the deep graph is not taller than the window: {r}")
    check(r["scroll"] > 0 and r["top"] is not None and r["top"] >= 0 and r["bottom"] <= r["viewport"],
          f"a tall flame graph does not open at its base (the root's row): {r}")
    # A zoom from the URL opens on the zoomed frame, not on the base below it.
    index = frames(s)[DEEP_ZOOM_TO]["index"]
    s.navigate("file://" + pages["flame"] + f"?n={index}")
    r = row_of(s, DEEP_ZOOM_TO)
    check(state(s)["zoomed"] == index and r["top"] is not None and r["top"] >= 0
          and r["bottom"] <= r["viewport"], f"zoomed from the URL, {DEEP_ZOOM_TO!r} is off screen: {r}")
    s.navigate("file://" + pages["icicle"])
    r = row_of(s, "all")
    check(r["scroll"] == 0 and r["top"] is not None and r["top"] >= 0,
          f"a tall icicle graph does not open at its top: {r}")
    return r["page"]


# A C++ name as cc1plus's profiles have them, 198 characters long.
LONG_NAME = ("hash_table<hash_map<int_hash<int, 0, -1>, tree_node*, simple_hashmap_traits<"
             "default_hash_traits<int_hash<int, 0, -1> >, tree_node*> >::hash_entry, false, "
             "xcallocator>::find_with_hash")

LONG_JS = """
var f = document.getElementById("functions").getBoundingClientRect();
var nums = document.querySelectorAll("#table tbody tr:first-child td.num");
var name = document.querySelector("#table tbody td.name");
return { right: nums[nums.length - 1].getBoundingClientRect().right, visible: Math.min(f.right,
         window.innerWidth), title: name.title, page: document.documentElement.scrollWidth,
         viewport: window.innerWidth };
"""


def step_long_names(s, tmp):
    """(m) A name longer than the table's room ends in an ellipsis, whole in its tooltip: the
    figures stay in view; the info lines wrap; the page does not scroll sideways."""
    folded = os.path.join(tmp, "long.folded")
    with open(folded, "w") as f:
        f.write(f"cc1plus;main;{LONG_NAME} 90\ncc1plus;main;other 10\n")
    page = os.path.join(tmp, "long.html")
    subprocess.run([FGCTL, "render", folded, "-f", "html", "-o", page, "--subtitle",
                    "a subtitle long enough to need more than one line in a window of 600 px, "
                    "which it gets rather than a page that scrolls sideways"],
                   check=True, timeout=60, capture_output=True)
    for width in (1280, 1024, 800, 600):
        s.set_window_size(width, 900)
        s.navigate("file://" + page)
        r = s.execute(LONG_JS)
        check(r["right"] <= r["visible"] + 1, f"at {width} px the figures end at x {r['right']:.0f}, "
              f"past the table's visible edge {r['visible']:.0f}")
        check(r["page"] <= r["viewport"], f"at {width} px the page is {r['page']} px wide, "
              f"the window {r['viewport']}")
        # The first row, the hottest by self: the long name, whole in its tooltip.
        check(r["title"] == LONG_NAME, f"at {width} px the name's tooltip is {r['title']!r}")


def main():
    render, fixture, stacks = fixture_and_renderer()

    with tempfile.TemporaryDirectory(prefix="fg-flame-html-browser-") as tmp:
        page = os.path.join(tmp, "flame.html")
        with open(page, "wb") as out:
            p = subprocess.run([render, "-f", "html", "-t", TITLE, "-i", "event: cpu-clock  frequency: 99 Hz",
                                fixture], stdout=out, stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0 or p.stderr:
            print(f"FAIL: fgtest-render exited {p.returncode}: {p.stderr.decode(errors='replace')}",
                  file=sys.stderr)
            return 1
        url = "file://" + page

        steps = [
            ("(a) load, table, hover", lambda s, i: step_load(s, stacks, i)),
            ("(b) zoom by clicking the canvas", lambda s, i: step_zoom(s, stacks, i)),
            ("(c) reset zoom", lambda s, i: step_reset(s, i)),
            ("(d) Search button", lambda s, i: step_search(s, stacks, i)),
            ("(e) Ctrl-F", lambda s, i: step_ctrl_f(s, stacks, i)),
            ("(f) case toggle", lambda s, i: step_case(s, stacks, i)),
            ("(g) view kept in the URL", lambda s, i: step_url(s, stacks, i, url)),
            ("(h) table sort, filter, row click", lambda s, i: step_table(s, stacks, i)),
            ("(i) 200,000-stack profile", lambda s, i: step_big(s, render, tmp)),
        ]
        with webdriver.chromium_session() as s:
            s.set_window_size(1800, 1000)
            s.navigate(url)
            errors = s.execute("return window.fgFlame ? null : 'no window.fgFlame: the script failed';")
            if errors:
                print(f"FAIL: {errors}", file=sys.stderr)
                return 1
            initial = frames(s)
            for name, step in steps:
                try:
                    step(s, initial)
                except (Failure, webdriver.WebDriverError) as e:
                    print(f"FAIL {name}: {e}", file=sys.stderr)
                    return 1
                print(f"ok   {name}")
            # (j) At 1280 px, and narrower: the table goes below the graph rather than
            # being squeezed beside it, and its names stay whole, one line each.
            for width in (1280, 1000):
                s.set_window_size(width, 900)
                s.navigate(url)
                box = s.execute(LAYOUT_JS)
                try:
                    check(box["table_width"] >= 400,
                          f"at {width} px the table is {box['table_width']} px wide")
                    check(box["wrapped_names"] == 0,
                          f"at {width} px {box['wrapped_names']} names wrap: {box['example']}")
                except Failure as e:
                    print(f"FAIL (j) layout: {e}", file=sys.stderr)
                    return 1
                print(f"ok   (j) at {width} px: table {box['table_width']} px wide, names whole")
            # (k) Narrower windows: the graph narrows with the window, the toolbar stays
            # on screen, and a resize keeps the view.
            try:
                s.set_window_size(1280, 900)
                s.navigate(url)
                box = boxes(s)
                check(box["canvas_css"] == WIDTH, f"at 1280 px the canvas is {box['canvas_css']} px wide")
            except (Failure, webdriver.WebDriverError) as e:
                print(f"FAIL (k) layout: {e}", file=sys.stderr)
                return 1
            for width in NARROW_WIDTHS:
                try:
                    box = step_narrow(s, url, initial, width)
                except (Failure, webdriver.WebDriverError) as e:
                    print(f"FAIL (k) at {width} px: {e}", file=sys.stderr)
                    return 1
                print(f"ok   (k) at {width} px: canvas {box['canvas_css']} px wide, Search ends at "
                      f"x {box['search']['right']:.0f} of {box['viewport']}, zoom and Reset Zoom work")
            try:
                step_resize(s, url, initial)
            except (Failure, webdriver.WebDriverError) as e:
                print(f"FAIL (k) resize: {e}", file=sys.stderr)
                return 1
            print("ok   (k) zoom and search kept through resizes to 800 px and back to 1280 px")
            # (l) A graph taller than the window opens at its base; an icicle graph at its top.
            try:
                page = step_tall(s, tmp)
            except (Failure, webdriver.WebDriverError, subprocess.SubprocessError) as e:
                print(f"FAIL (l) tall graph: {e}", file=sys.stderr)
                return 1
            print(f"ok   (l) a {DEEP}-deep graph ({page} px tall page) opens at its base, zoomed from the URL "
                  "at the zoomed frame, and as an icicle graph at its top")
            # (m) Long names leave the figures in view; nothing scrolls sideways.
            try:
                step_long_names(s, tmp)
            except (Failure, webdriver.WebDriverError, subprocess.SubprocessError) as e:
                print(f"FAIL (m) long names: {e}", file=sys.stderr)
                return 1
            print("ok   (m) a 198-character name ends in an ellipsis, the figures stay in view, "
                  "at 1280, 1024, 800 and 600 px")
    return 0


# The table's width, and the name cells taller than one line (wrapped).
LAYOUT_JS = """
var t = document.getElementById("functions").getBoundingClientRect();
var cells = document.querySelectorAll("#table td.name"), wrapped = 0, example = null;
for (var i = 0; i < cells.length; i++) {
    var c = cells[i], line = parseFloat(getComputedStyle(c).lineHeight) || 16;
    if (c.getBoundingClientRect().height > 1.8 * line) { wrapped++; example = example || c.textContent; }
}
return { table_width: t.width, wrapped_names: wrapped, example: example };
"""



if __name__ == "__main__":
    sys.exit(main())
