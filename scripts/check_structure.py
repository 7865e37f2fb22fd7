#!/usr/bin/env python3
"""Structure checks of the workspace that CI runs (`.ci/run`):

1. No import loop between the modules of a crate: module A uses something of module B
   (`use crate::b::...`, `crate::b::x`, `super::b`), B uses A, directly or through others.
   Modules also never import from the crate root (`use crate::{X}` where `X` is a
   re-export of lib.rs/main.rs): that is a loop through the root. Test modules
   (`#[cfg(test)] mod tests { ... }` at the end of a file) are not counted.
2. No Rust, TypeScript or JavaScript source file over 800 lines.

Prints what is wrong and exits 1, or prints a summary and exits 0.
"""
import collections
import os
import re
import subprocess
import sys

MAX_LINES = 800


def crate_modules(crate_dir):
    """Module path ('' for the root, 'tau::run', ...) -> file, for one crate."""
    src = os.path.join(crate_dir, "src")
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            out["::".join(parts)] = path
    return out


def module_of(reference, modules):
    """The module a path such as `tau::run::read` names (its longest module prefix)."""
    segs = reference.split("::")
    for i in range(len(segs), 0, -1):
        cand = "::".join(segs[:i])
        if cand in modules:
            return cand
    return ""


def references(module, path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
    text = re.sub(r"//.*", "", text)
    refs = set(re.findall(r"\bcrate::((?:\w+::)*\w+)", text))
    for group in re.findall(r"use crate::\{([^}]*)\}", text, flags=re.S):
        refs.update(i.strip().split(" as ")[0] for i in group.split(",") if i.strip())
    parent = "::".join(module.split("::")[:-1])
    for r in re.findall(r"\bsuper::((?:\w+::)*\w+)", text):
        refs.add(f"{parent}::{r}" if parent else r)
    return refs


def import_loops(crate_dir):
    modules = crate_modules(crate_dir)
    graph = collections.defaultdict(set)
    problems = []
    for m, path in modules.items():
        for r in references(m, path):
            target = module_of(r, modules)
            if target == "" and m != "":
                problems.append(f"{path}: uses `crate::{r}` from the crate root; import it from the module that defines it")
            elif target not in ("", m) and not m.startswith(target + "::"):
                graph[m].add(target)
    # Strongly connected components (Tarjan).
    index, low, stack, on, n = {}, {}, [], set(), [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                problems.append(f"{crate_dir}: import loop between the modules {', '.join(sorted(comp))}")

    sys.setrecursionlimit(10000)
    for v in list(modules):
        if v not in index:
            visit(v)
    return problems, len(modules)


def long_files():
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    out = []
    for f in tracked:
        if f.endswith((".rs", ".ts", ".js", ".mjs")) and "/api/" not in f and os.path.isfile(f):
            n = sum(1 for _ in open(f, encoding="utf-8", errors="replace"))
            if n > MAX_LINES:
                out.append(f"{f}: {n} lines (at most {MAX_LINES}); split it along a real seam")
    return out


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    problems, counted = [], 0
    for crate in sorted(os.listdir("crates")):
        p, n = import_loops(os.path.join("crates", crate))
        problems += p
        counted += n
    problems += long_files()
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"structure: no import loop among {counted} modules; no source file over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
