#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turns a text file into a C header holding it as one string constant.

    embed.py [--svg] INPUT OUTPUT NAME

The renderers embed their scripts this way, so the scripts stay plain .js
files. A script goes into a <script> element verbatim, so it must not
contain anything that ends or disturbs one: that fails the build.

--svg: the script goes inline into an SVG, which an XML parser reads as
well as an HTML one. Its leading comments (the file's licence and what it
is) are left out of it, so the graph holds only code, and it must hold no
'<' and no '&', so that it needs no CDATA section.
"""

import re
import sys


def main():
    args = sys.argv[1:]
    svg = args[:1] == ["--svg"]
    if svg:
        args = args[1:]
    src, dst, name = args[:3]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    if svg:
        text = re.sub(r"\A(?:\s*/\*.*?\*/)*\s*", "", text, flags=re.S)
    low = text.lower()
    for bad in ("</script", "<!--", "\u2028", "\u2029") + (("<", "&") if svg else ()):
        if bad in low:
            sys.exit(f"{src}: contains {bad!r}, which would break the {'SVG' if svg else 'page'}'s <script>")
    out = [f"/* Generated from {src.rsplit('/', 1)[-1]} by embed.py; do not edit. */",
           f"static const char {name}[] ="]
    for line in text.splitlines(keepends=True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
        # Keep trigraph-like sequences and non-ASCII bytes literal and unambiguous.
        esc = esc.replace("??", "?\\?")
        esc = "".join(c if ord(c) < 128 else "".join(f"\\{b:03o}" for b in c.encode()) for c in esc)
        out.append(f'\t"{esc}"')
    out[-1] += ";"
    with open(dst, "w", encoding="ascii") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
