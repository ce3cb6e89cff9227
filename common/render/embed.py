#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turns a text file into a C header holding it as one string constant.

    embed.py INPUT OUTPUT NAME

The HTML renderer embeds its script this way, so the script stays a plain
.js file. The script goes into a <script> element verbatim, so it must not
contain anything that ends or disturbs one: that fails the build.
"""

import sys


def main():
    src, dst, name = sys.argv[1:4]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    low = text.lower()
    for bad in ("</script", "<!--", "\u2028", "\u2029"):
        if bad in low:
            sys.exit(f"{src}: contains {bad!r}, which would break the page's <script>")
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
