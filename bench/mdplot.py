#!/usr/bin/python3
"""mdplot.py - a bar chart (SVG) of one table of a benchmark report.

The reports in docs/benchmarks/ are Markdown with their figures in tables.
This draws one of those tables as horizontal bars, with no library beyond
Python's own (it also runs on a lent machine without Debian's packages):

  mdplot.py REPORT.md --table TEXT --label COLS (--stack COLS | --bars COLS)
            [--pick first|last] [--title T] [--unit U] [--nth N] -o OUT.svg

  --table TEXT   the table whose header row contains TEXT (the N-th such
                 table with --nth N, counting from 1)
  --label COLS   comma-separated header names; their cells, joined by a
                 space, name each bar
  --stack COLS   one bar per row, these columns stacked (parts of a whole:
                 user and kernel time, say)
  --bars COLS    one bar per column per row, side by side (HotKV against
                 redis-server, say)
  --pick         which number of a cell is the value: the first (default;
                 "181.6 B" -> 181.6) or the last ("31% (3.10 us)" -> 3.10)
  --where COL=RE only the rows whose cell in COL matches the regex RE
                 (may be given more than once)

Every bar ends with its value (a stack: its total).  Example:

  bench/mdplot.py docs/benchmarks/cpusplit-16core-2026-12-04.md \\
      --table "| user us/req |" --label server,command \\
      --stack "user us/req,kernel us/req" --unit "us per request" \\
      -o docs/benchmarks/cpusplit-16core-2026-12-04.svg
"""
import argparse
import re
import sys
from xml.sax.saxutils import escape

COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]
NUM = re.compile(r"-?\d+(?:\.\d+)?")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def find_table(lines, text, nth):
    seen = 0
    for i, line in enumerate(lines):
        if line.startswith("|") and text in line and i + 1 < len(lines) and set(lines[i + 1].strip()) <= set("|-: "):
            seen += 1
            if seen == nth:
                head = cells(line)
                rows = []
                for row in lines[i + 2:]:
                    if not row.startswith("|"):
                        break
                    rows.append(cells(row))
                return head, rows
    sys.exit("mdplot: no table with %r (number %d)" % (text, nth))


def value(cell, pick):
    nums = NUM.findall(cell.replace(",", ""))
    if not nums:
        return None
    return float(nums[0] if pick == "first" else nums[-1])


def col_index(head, name):
    for i, h in enumerate(head):
        if h.strip("*") == name:
            return i
    sys.exit("mdplot: no column %r in %s" % (name, head))


def main():
    ap = argparse.ArgumentParser(description="bar chart (SVG) of a Markdown table")
    ap.add_argument("report")
    ap.add_argument("--table", required=True)
    ap.add_argument("--nth", type=int, default=1)
    ap.add_argument("--label", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--stack")
    g.add_argument("--bars")
    ap.add_argument("--pick", choices=("first", "last"), default="first")
    ap.add_argument("--where", action="append", default=[])
    ap.add_argument("--title", default="")
    ap.add_argument("--unit", default="")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()

    lines = open(a.report).read().splitlines()
    head, rows = find_table(lines, a.table, a.nth)
    lab = [col_index(head, c) for c in a.label.split(",")]
    series = (a.stack or a.bars).split(",")
    idx = [col_index(head, c) for c in series]
    for w in a.where:
        col, _, rx = w.partition("=")
        ci = col_index(head, col)
        rows = [r for r in rows if ci < len(r) and re.search(rx, r[ci])]
    if not rows:
        sys.exit("mdplot: no rows left")

    # bars: (label, [(series number, value)])
    bars = []
    for r in rows:
        name = " ".join(r[i] for i in lab)
        vals = [value(r[i], a.pick) if i < len(r) else None for i in idx]
        if a.stack:
            bars.append((name, [(k, v or 0.0) for k, v in enumerate(vals)]))
        else:
            for k, v in enumerate(vals):
                if v is not None:
                    bars.append((name if k == 0 else "", [(k, v)]))
    vmax = max(sum(v for _, v in segs) for _, segs in bars) or 1.0

    bar_h, gap, right, top = 18, 6, 90, 50
    left = max(120, 7 * max(len(n) for n, _ in bars) + 16)  # room for the longest name
    plot_w = 520
    legend_h = 22
    height = top + len(bars) * (bar_h + gap) + legend_h + 40
    width = left + plot_w + right
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (10, escape(a.title or a.report))]
    # grid: 5 steps
    step = nice_step(vmax / 5)
    x = 0.0
    while x <= vmax * 1.0001:
        px = left + x / vmax * plot_w
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (px, top - 6, px, top + len(bars) * (bar_h + gap)))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>' % (px, top - 10, fmt(x)))
        x += step
    y = top
    for name, segs in bars:
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 8, y + bar_h - 5, escape(name)))
        px = left
        total = 0.0
        for k, v in segs:
            w = v / vmax * plot_w
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'
                       % (px, y, w, bar_h, COLORS[k % len(COLORS)]))
            px += w
            total += v
        out.append('<text x="%.1f" y="%d">%s</text>' % (px + 5, y + bar_h - 5, fmt(total)))
        y += bar_h + gap
    # legend and unit
    lx = left
    ly = y + 14
    for k, s in enumerate(series):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, ly - 10, COLORS[k % len(COLORS)]))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 16, ly, escape(s)))
        lx += 24 + 7 * len(s)
    if a.unit:
        out.append('<text x="%d" y="%d" fill="#555">%s</text>' % (left, ly + 22, escape(a.unit)))
    out.append("</svg>")
    open(a.out, "w").write("\n".join(out) + "\n")


def nice_step(x):
    if x <= 0:
        return 1.0
    p = 10 ** int(("%e" % x).split("e")[1])
    for m in (1, 2, 2.5, 5, 10):
        if m * p >= x:
            return m * p
    return 10 * p


def fmt(v):
    if v >= 100000:
        return "%.3gM" % (v / 1e6) if v >= 1e6 else "%dk" % round(v / 1000)
    if v >= 100:
        return "%d" % round(v)
    return ("%.2f" % v).rstrip("0").rstrip(".")


if __name__ == "__main__":
    main()
