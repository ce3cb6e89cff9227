# SPDX-License-Identifier: LGPL-2.1-or-later
"""PLT stubs are named as perf names them: NAME@plt.

The fgfixture programs call into libfgfixture.so, whose fgfixture_gamma calls
fgfixture_beta a thousand times a round through the library's own PLT, and
beta calls fgfixture_alpha the same way: a few percent of the samples land in
those two stubs (about 1%). They must be fgfixture_beta@plt and fgfixture_alpha@plt, under
the function that called them, and no frame of the library may be left as
libfgfixture.so+0x (its .symtab covers everything else). Run for a program
with a lazy .plt and for one whose calls go through .plt.sec (IBT), both
unwound with DWARF CFI, which covers the stubs."""

from fgdtest import Daemon, check, parse_folded, program, require_root, run

# The stubs and their callers: fgfixture_main_work calls alpha too, through the program's PLT.
STUBS = {"fgfixture_beta@plt": (";fgfixture_gamma;fgfixture_beta@plt",),
         "fgfixture_alpha@plt": (";fgfixture_beta;fgfixture_alpha@plt",
                                 ";fgfixture_main_work;fgfixture_alpha@plt")}


def test():
    require_root()
    with Daemon() as d:
        for name in ("fgfixture-pie", "fgfixture-ibt-pie"):
            r = d.fgctl("record", "-t", "4", "-F", "999", "-o", "-", "--", program(name), "3",
                        check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            total = sum(stacks.values())
            check(total > 1000, f"{name}: too few samples: {total}")
            leaves = {}
            for s, c in stacks.items():
                leaf = s.rsplit(";", 1)[-1]
                if leaf in STUBS:
                    leaves[leaf] = leaves.get(leaf, 0) + c
                    check(any(s.endswith(t) for t in STUBS[leaf]),
                          f"{name}: {leaf} under the wrong caller: {s}")
            print(f"{name}: {total} samples, in the stubs {leaves}")
            # About 1% of the samples, 30 in 3 s: fewer than 3 is a bug, not bad luck.
            check(sum(leaves.values()) >= 3,
                  f"{name}: no samples named as PLT stubs: {sorted(stacks, key=stacks.get)[-5:]}")
            unnamed = [s for s in stacks if "libfgfixture.so+0x" in s]
            check(not unnamed, f"{name}: library code left unnamed: {unnamed[:3]}")


run(test)
