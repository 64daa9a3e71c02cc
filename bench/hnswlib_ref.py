#!/usr/bin/python3
"""hnswlib_ref.py - the in-process reference of issue #8's vector benchmark.

Reads a dataset written by `vecbench gen` (bench/vecbench.c: 64-byte header
"HKVECS01", u32 n, dim, nq, k, clusters, f32 sigma, u64 seed; n*dim f32
data, nq*dim f32 queries, nq*k u32 truth ids, nq*k f32 truth similarities),
builds an hnswlib index (space 'cosine', M=16, ef_construction=200, one
thread) over the data, and for every EF measures recall@k against the
exact truth and queries/s, two ways:
  - batch: knn_query(all queries, k, num_threads=1) repeated until at
    least T seconds passed (the fairer "in-process" figure: no Python
    overhead per query);
  - loop:  one knn_query call per query, in a Python loop (includes the
    interpreter's per-call overhead, a few microseconds).
The batch figure also comes as CPU time per query (time.process_time),
which stays meaningful on a machine shared with other work.
Memory: the process's resident set growth over the index build, per
element (the data array is loaded before the first reading).

Run with /usr/bin/python3 (python3-hnswlib, numpy).  Output: one
"HNSWLIB build ..." line and one "HNSWLIB query ..." line per EF, as
key=value pairs.

Usage: hnswlib_ref.py FILE [--ef 40,80,150,300,500] [--time 5] [--M 16]
                           [--efc 200] [--seed 100]
"""
import argparse
import os
import struct
import sys
import time

import hnswlib
import numpy as np


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def load(path):
    with open(path, "rb") as f:
        hdr = f.read(64)
    if hdr[:8] != b"HKVECS01":
        sys.exit("%s: not a vecbench dataset" % path)
    n, dim, nq, k, clusters = struct.unpack_from("<5I", hdr, 8)
    (sigma,) = struct.unpack_from("<f", hdr, 28)
    (seed,) = struct.unpack_from("<Q", hdr, 32)
    off = 64
    data = np.fromfile(path, dtype="<f4", count=n * dim, offset=off).reshape(n, dim)
    off += 4 * n * dim
    queries = np.fromfile(path, dtype="<f4", count=nq * dim, offset=off).reshape(nq, dim)
    off += 4 * nq * dim
    truth = np.fromfile(path, dtype="<u4", count=nq * k, offset=off).reshape(nq, k)
    return dict(n=n, dim=dim, nq=nq, k=k, clusters=clusters, sigma=sigma, seed=seed,
                data=np.ascontiguousarray(data), queries=np.ascontiguousarray(queries), truth=truth)


def recall(labels, truth, k):
    hits = 0
    for row, tr in zip(labels, truth):
        hits += len(set(int(x) for x in row[:k]) & set(int(x) for x in tr[:k]))
    return hits / (len(truth) * k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ef", default="40,80,150,300,500")
    ap.add_argument("--time", type=float, default=5.0)
    ap.add_argument("--M", type=int, default=16)
    ap.add_argument("--efc", type=int, default=200)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--no-loop", action="store_true", help="skip the one-query-per-call loop")
    a = ap.parse_args()

    ds = load(a.file)
    n, dim, k = ds["n"], ds["dim"], ds["k"]
    ids = np.arange(n, dtype=np.int64)
    rss0 = rss_bytes()
    idx = hnswlib.Index(space="cosine", dim=dim)
    idx.init_index(max_elements=n, ef_construction=a.efc, M=a.M, random_seed=a.seed)
    idx.set_num_threads(1)
    t0, c0 = time.perf_counter(), time.process_time()
    idx.add_items(ds["data"], ids, num_threads=1)
    t1, c1 = time.perf_counter(), time.process_time()
    rss1 = rss_bytes()
    build = t1 - t0
    print("HNSWLIB build n=%d dim=%d M=%d efc=%d secs=%.3f inserts_per_s=%.1f cpu_us_per_insert=%.1f rss_growth=%d"
          " bytes_per_elem=%.1f raw_vector_bytes=%d" % (n, dim, a.M, a.efc, build, n / build, (c1 - c0) / n * 1e6,
                                                        rss1 - rss0, (rss1 - rss0) / n, dim * 4), flush=True)

    Q, truth = ds["queries"], ds["truth"]
    nq = len(Q)
    for ef in [int(x) for x in a.ef.split(",") if x]:
        idx.set_ef(ef)
        # batch, one thread
        labels, _ = idx.knn_query(Q, k=k, num_threads=1)
        rec = recall(labels, truth, k)
        done, t0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            idx.knn_query(Q, k=k, num_threads=1)
            done += nq
            el = time.perf_counter() - t0
            if el >= a.time:
                break
        qps_batch = done / el
        cpu_us = (time.process_time() - c0) / done * 1e6
        qps_loop = float("nan")
        if not a.no_loop:
            done, t0 = 0, time.perf_counter()
            while True:
                for q in Q:
                    idx.knn_query(q, k=k, num_threads=1)
                done += nq
                el = time.perf_counter() - t0
                if el >= a.time / 2:
                    break
            qps_loop = done / el
        print("HNSWLIB query ef=%d k=%d recall=%.4f qps_batch=%.1f qps_loop=%.1f cpu_us_per_query=%.1f"
              % (ef, k, rec, qps_batch, qps_loop, cpu_us), flush=True)


if __name__ == "__main__":
    main()
