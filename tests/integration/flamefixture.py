# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/data/flame-browser.folded, read independently of the renderers, and
the figures the browser tests expect from it."""

import os
import re

import webdriver

# What the browser tests do with the fixture.
ZOOM_TO = "compute"
ZOOM_SIBLINGS = ["io", "operator<<(std::ostream&, Foo const&)"]
ZOOM_ANCESTORS = ["all", "main", "run", "process"]
ZOOM_UNRELATED = ["init", "idle", "shutdown", "sys_read"]
TRUNCATED = "std::vector<int>::push_back"
SEARCH_BUTTON_TERM = "compute|hot_"  # hot_a, hot_b nest in compute; hot_c does not
CTRL_F_TERM = "^sys_"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def close(a, b, tol):
    return abs(a - b) <= tol


def read_fixture(path):
    """[(frames, count)]; annotations such as _[k] colour a frame but are not
    shown, as in flamegraph.pl, so they are stripped here."""
    stacks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            frames, count = line.rsplit(" ", 1)
            stacks.append(([re.sub(r"_\[[kjiw]\]$", "", f) for f in frames.split(";")], int(count)))
    return stacks


def tree_totals(stacks):
    """{path tuple: samples} for every frame, with the root "all" as ()."""
    totals = {(): 0}
    for frames, count in stacks:
        totals[()] += count
        for d in range(1, len(frames) + 1):
            totals[tuple(frames[:d])] = totals.get(tuple(frames[:d]), 0) + count
    return totals


def samples_of(stacks, name):
    """Samples of the frames named name (the fixture has each name at one place)."""
    return sum(n for path, n in tree_totals(stacks).items() if (path[-1] if path else "all") == name)


def matched_percent(stacks, term, flags=0):
    """Each sample once: a stack counts if any of its frames (or the root) matches."""
    rx = re.compile(term, flags)
    total = sum(n for _, n in stacks)
    hit = sum(n for frames, n in stacks if rx.search("all") or any(rx.search(f) for f in frames))
    return 100 * hit / total


def fixture_and_renderer():
    """(fgtest-render's path, the fixture's path, its stacks); skips outside meson test."""
    programs = os.environ.get("FG_TEST_PROGRAMS")
    if not programs:
        webdriver.skip("FG_TEST_PROGRAMS is not set; run through meson test")
    data_dir = os.environ.get("FG_TEST_DATA_DIR",
                              os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
    fixture = os.path.join(data_dir, "flame-browser.folded")
    return os.path.join(programs, "fgtest-render"), fixture, read_fixture(fixture)
