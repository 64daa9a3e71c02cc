#!/usr/bin/env python3
"""check-layers.py - the include-direction check (make test runs it).

Reads every #include "..." under src/ (the load generator in src/tools/ is
a separate program and is not part of the server's graph), maps each file
to its layer (its directory; src/server.h is a layer of its own; the .c
files at src/ are the top) and fails when a file includes a layer that is
not below its own in LAYERS.  Same-layer includes are allowed; cycles
between files of one layer are listed (they must be genuinely mutual).

  scripts/check-layers.py            check; print the directory graph
  scripts/check-layers.py --files    also list every cross-layer edge
  scripts/check-layers.py --dot      the directory graph in Graphviz form
  scripts/check-layers.py --root DIR check another tree's src/ (tests)

Keep LAYERS in step with docs/architecture.md ("Layers and dependency
direction"): that table is the rule, this list is its executable form.
"""
import os
import re
import sys

# Bottom to top.  A layer may include the layers listed for it, nothing
# else.  "server.h" is process-wide configuration and lifecycle flags; it
# includes nothing of ours.
LAYERS = [
    ("base", []),
    ("ds", ["base"]),
    ("proto", ["base"]),
    ("server.h", []),
    ("db", ["base", "ds", "server.h"]),
    ("types", ["base", "ds", "db", "server.h"]),
    ("net", ["base", "ds", "proto", "server.h", "db"]),
    ("persist", ["base", "ds", "proto", "server.h", "db", "types", "net"]),
    ("cluster", ["base", "ds", "proto", "server.h", "db", "types", "net", "persist"]),
    ("cmd", ["base", "ds", "proto", "server.h", "db", "types", "net", "persist", "cluster"]),
    ("script", ["base", "ds", "proto", "server.h", "db", "types", "net", "persist", "cluster", "cmd"]),
    ("config", ["base", "ds", "proto", "server.h", "db", "types", "net", "persist", "cluster", "cmd", "script"]),
    ("top", ["base", "ds", "proto", "server.h", "db", "types", "net", "persist", "cluster", "cmd", "script", "config"]),
]
ALLOWED = dict(LAYERS)
ORDER = [n for n, _ in LAYERS]
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(rel):
    """rel: a path relative to src/."""
    if rel == "server.h":
        return "server.h"
    d = os.path.dirname(rel)
    if d == "":
        return "top"
    return d.split("/")[0]


def scan(root):
    edges = []  # (from_rel, to_rel)
    for d, dirs, files in os.walk(root):
        dirs.sort()
        rel_d = os.path.relpath(d, root)
        if rel_d == "tools" or rel_d.startswith("tools/"):
            continue
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".tab", ".docs")):
                continue
            path = os.path.join(d, f)
            src = os.path.relpath(path, root)
            with open(path, errors="replace") as fh:
                for line in fh:
                    m = INC.match(line)
                    if not m:
                        continue
                    tgt = os.path.normpath(os.path.join(d, m.group(1)))
                    if not os.path.exists(tgt):
                        continue  # a system header spelled with quotes
                    edges.append((src, os.path.relpath(tgt, root)))
    return edges


def scc(g):
    """Strongly connected components of more than one node; g: node ->
    set of nodes."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                strong(w)
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def file_cycles(edges):
    """Cycles among files of one layer."""
    g = {}
    for a, b in edges:
        if layer_of(a) == layer_of(b):
            g.setdefault(a, set()).add(b)
    return scc(g)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if "--root" in sys.argv:
        root = sys.argv[sys.argv.index("--root") + 1]
    root = os.path.normpath(root)
    edges = scan(root)
    graph, bad = {}, []
    for a, b in edges:
        la, lb = layer_of(a), layer_of(b)
        if la == lb:
            continue
        graph.setdefault(la, {}).setdefault(lb, []).append((a, b))
        if la not in ALLOWED or lb not in ALLOWED[la]:
            bad.append((a, b))
    if "--dot" in sys.argv:
        print("digraph layers {")
        for la in ORDER:
            for lb in sorted(graph.get(la, {}), key=ORDER.index):
                print('  "%s" -> "%s";' % (la, lb))
        print("}")
        return 0
    print("layer dependency graph (a -> the layers it includes):")
    for la in reversed(ORDER):
        deps = sorted(graph.get(la, {}), key=lambda x: ORDER.index(x) if x in ORDER else 99, reverse=True)
        print("  %-9s -> %s" % (la, " ".join(deps) if deps else "(nothing)"))
    if "--files" in sys.argv:
        for la in ORDER:
            for lb, lst in sorted(graph.get(la, {}).items()):
                for a, b in sorted(set(lst)):
                    print("    %s -> %s" % (a, b))
    # Cycles between layers (the include order forbids them; listed so a
    # failing run shows the tangle, not only the edges).
    for c in scc({la: set(graph[la]) for la in graph}):
        print("layer cycle: " + " <-> ".join(c))
    cyc = file_cycles(edges)
    for c in cyc:
        print("same-layer include cycle: " + " <-> ".join(c))
    if bad:
        print("\n%d include(s) against the layer order (see docs/architecture.md):" % len(bad))
        for a, b in sorted(set(bad)):
            print("  %s (%s) includes %s (%s)" % (a, layer_of(a), b, layer_of(b)))
        return 1
    print("include direction: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
