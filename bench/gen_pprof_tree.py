#!/usr/bin/env python3
"""Deterministic generator of a pprof profile with a large, deep call tree (issue "speed", item 5).

usage: python3 bench/gen_pprof_tree.py OUT.pb.gz [--contexts 1000000] [--branching 4] [--functions 5000]

The call tree is complete: every node has `--branching` children down to the depth at which
the tree holds at least `--contexts` nodes (branching 4: depth 10 gives 1,398,101 calling
contexts, 1,048,576 of them leaves). Each leaf gets one sample record whose stack is its
path (leaf first, as pprof writes it), with values `samples = 1` and
`cpu = 10,000,000 ns x (1 + leaf % 7)`. A node's function is picked from a pool of
`--functions` names by a hash of (depth, position), so routines recur across the tree as in a
real code (a flat profile of a few thousand routines, a call tree of 10^6 contexts).

The message is encoded by hand (protobuf wire format, the fields of Google's profile.proto:
sample_type 1, sample 2, location 4, function 5, string_table 6, period_type 11, period 12),
so nothing but Python's standard library is needed. Output is gzip-compressed like
`go tool pprof` writes it; the same arguments always give the same bytes (gzip mtime 0).
"""

import argparse
import gzip
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint((num << 3) | 2) + varint(len(b)) + b


def packed(num, values):
    return field_bytes(num, b"".join(varint(v) for v in values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--contexts", type=int, default=1_000_000)
    ap.add_argument("--branching", type=int, default=4)
    ap.add_argument("--functions", type=int, default=5000)
    a = ap.parse_args()
    b = a.branching
    depth, nodes, level = 1, b, b
    while nodes < a.contexts:
        level *= b
        nodes += level
        depth += 1
    strings = ["", "samples", "count", "cpu", "nanoseconds", "gen.c"]
    fn_names = [f"solver_{i:05d}" for i in range(a.functions)]
    strings_index = len(strings)
    strings += fn_names
    parts = []
    parts.append(field_bytes(1, field_varint(1, 1) + field_varint(2, 2)))  # samples/count
    parts.append(field_bytes(1, field_varint(1, 3) + field_varint(2, 4)))  # cpu/nanoseconds
    # Functions: id = 1 + pool index; one location per function (id = function id).
    for i in range(a.functions):
        fid = i + 1
        fn = field_varint(1, fid) + field_varint(2, strings_index + i) + field_varint(4, 5)
        parts.append(field_bytes(5, fn))
        line = field_varint(1, fid) + field_varint(2, 10 + i)
        loc = field_varint(1, fid) + field_bytes(4, line)
        parts.append(field_bytes(4, loc))

    def function_of(d, pos):
        return 1 + ((d * 2654435761 + pos * 40503) % a.functions)

    # Leaves at the last level, in order; the path of leaf k: positions k // b^j per level.
    n_leaves = b ** depth
    samples = bytearray()
    for k in range(n_leaves):
        stack = []
        pos = k
        for d in range(depth, 0, -1):  # leaf first
            stack.append(function_of(d, pos))
            pos //= b
        values = [1, 10_000_000 * (1 + k % 7)]
        samples += field_bytes(2, packed(1, stack) + packed(2, values))
    parts.append(bytes(samples))
    for s in strings:
        parts.append(field_bytes(6, s.encode()))
    parts.append(field_bytes(11, field_varint(1, 3) + field_varint(2, 4)))
    parts.append(field_varint(12, 10_000_000))
    data = b"".join(parts)
    with open(a.out, "wb") as f:
        f.write(gzip.compress(data, mtime=0))
    print(f"{a.out}: {nodes} calling contexts (depth {depth}, branching {b}), {n_leaves} samples, "
          f"{a.functions} functions, {len(data)} bytes ({len(data) / 1e6:.1f} MB) before gzip",
          file=sys.stderr)


if __name__ == "__main__":
    main()
