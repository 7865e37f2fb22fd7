#!/usr/bin/env python3
"""Deterministic generator of one large TAU profile file: a one-rank run with a deep callpath
profile (TAU_CALLPATH, TAU_CALLPATH_DEPTH large), the shape of a big application's
`profile.0.0.0` (issue "speed": a reader handles one large file as well as many small ones).

usage: python3 bench/gen_tau_callpaths.py OUT_DIR [--callpaths 1000000] [--functions 5000] [--depth 8]

The call tree is complete below `.TAU application` with branching 8, cut at `--depth` levels
or when `--callpaths` nodes are written; each node is a routine picked from a pool of
`--functions` names by a hash of (depth, position). Every node is one callpath line
`"a => b => ... => x"` (TAU writes the whole path), and every routine one flat line, with
exclusive values deterministic in the position and inclusive = exclusive + the children's
inclusive, so the file is consistent. The header, metadata, `0 aggregates` and user-event
section follow TAU's profile format (`TauProfile.cpp` / ParaProf's reader). The same
arguments always give the same bytes.
"""

import argparse
import os


def routine(functions, depth, pos):
    h = (depth * 2654435761 + pos * 40503) & 0xFFFFFFFF
    k = h % functions
    return f"solver_{k} (int, double *) [{{src/solver_{k % 97}.c}} {{{100 + k % 900}}}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--callpaths", type=int, default=1_000_000)
    ap.add_argument("--functions", type=int, default=5000)
    ap.add_argument("--depth", type=int, default=8)
    a = ap.parse_args()
    # Nodes in preorder: (path, depth, pos); children of node (d, p) are (d + 1, 8p + j).
    nodes = []
    stack = [((".TAU application",), 0, 0)]
    while stack and len(nodes) < a.callpaths:
        path, d, p = stack.pop()
        nodes.append((path, d, p))
        if d + 1 < a.depth:
            for j in reversed(range(8)):
                q = 8 * p + j
                stack.append((path + (routine(a.functions, d + 1, q),), d + 1, q))
    excl = [1000 + (p * 7919 + d * 104729) % 100000 for _, d, p in nodes]
    incl = list(excl)
    calls = [1 + (p % 13) for _, _, p in nodes]
    subcalls = [0] * len(nodes)
    index = {path: i for i, (path, _, _) in enumerate(nodes)}
    for i in reversed(range(1, len(nodes))):
        parent = index[nodes[i][0][:-1]]
        incl[parent] += incl[i]
        subcalls[parent] += calls[i]
    flat = {}
    for i, (path, _, _) in enumerate(nodes):
        f = flat.setdefault(path[-1], [0, 0, 0, 0])
        f[0] += calls[i]
        f[1] += subcalls[i]
        f[2] += excl[i]
        if path[-1] not in path[:-1]:
            f[3] += incl[i]
    os.makedirs(a.out, exist_ok=True)
    meta = ("<metadata><attribute><name>Metric Name</name><value>TIME</value></attribute>"
            "<attribute><name>Node Name</name><value>gen</value></attribute></metadata>")
    with open(os.path.join(a.out, "profile.0.0.0"), "w") as out:
        out.write(f"{len(flat) + len(nodes) - 1} templated_functions_MULTI_TIME\n")
        out.write(f"# Name Calls Subrs Excl Incl ProfileCalls # {meta}\n")
        for name, (c, s, e, i) in flat.items():
            group = "TAU_DEFAULT" if name == ".TAU application" else "TAU_USER"
            out.write(f'"{name}" {c} {s} {e} {i} 0 GROUP="{group}" \n')
        for k in range(1, len(nodes)):
            out.write(f'"{" => ".join(nodes[k][0])}" {calls[k]} {subcalls[k]} {excl[k]} {incl[k]} 0 '
                      f'GROUP="TAU_CALLPATH|TAU_USER" \n')
        out.write("0 aggregates\n0 userevents\n# eventname numevents max min mean sumsqr\n")
    print(f"wrote {len(nodes) - 1} callpaths and {len(flat)} routines to {a.out}/profile.0.0.0")


if __name__ == "__main__":
    main()
