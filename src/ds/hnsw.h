/* hnsw.h - HotKV's HNSW index (Hierarchical Navigable Small World graph)
 * for vector sets (types/vset.c).
 *
 * Nodes are numbered with 32-bit ids (reused after deletes).  Each node is
 * one slot: a small header, its vector (float32 as two 16-bit planes,
 * int8 + scale, or a bitmap, per the index's quantisation) and its links, level 0 first
 * (2*M slots) then M slots per upper level.  Links are kept bidirectional:
 * if a links to b at level l, b links to a at level l.  Deleting a node
 * unlinks it from every neighbour and reconnects the neighbours among
 * themselves (repair), so recall holds under constant insert/delete.
 *
 * Vectors given to insert/search are float32, already L2-normalised by the
 * caller; the distance is 1 - cosine (0..2), computed on the stored form
 * (for Q8 and BIN an approximation).
 *
 * Threads: the index has no lock of its own.  Any number of threads may
 * call the const functions (search, get) at once; insert/delete/load need
 * exclusive access (the vector set's rwlock, cmd/t_vset.h).  Searches use
 * a per-thread visited-tag array (no per-node scratch), grown on demand. */
#ifndef HK_HNSW_H
#define HK_HNSW_H

#include <stddef.h>
#include <stdint.h>

enum { HNSW_F32 = 0, HNSW_Q8 = 1, HNSW_BIN = 2 };
#define HNSW_MAX_LEVEL 16
#define HNSW_NONE UINT32_MAX

struct hnsw;

struct hnsw_result {
    uint32_t id;
    float dist; /* 1 - cosine, 0..2 */
};

/* A filter: returns non-zero when the node's payload passes. */
typedef int (*hnsw_filter_fn)(void *payload, void *ctx);

/* dim > 0; quant HNSW_F32/Q8/BIN; M >= 2 (level 0 gets 2*M links). */
struct hnsw *hnsw_new(uint32_t dim, int quant, uint32_t M);
void hnsw_free(struct hnsw *h);

uint32_t hnsw_dim(const struct hnsw *h);
int hnsw_quant(const struct hnsw *h);
uint32_t hnsw_m(const struct hnsw *h);
uint64_t hnsw_count(const struct hnsw *h);    /* live nodes */
uint32_t hnsw_max_id(const struct hnsw *h);   /* ids are < this */
int hnsw_max_level(const struct hnsw *h);     /* -1 when empty */
uint32_t hnsw_entry(const struct hnsw *h);    /* HNSW_NONE when empty */
size_t hnsw_mem(const struct hnsw *h);        /* bytes allocated */

/* Insert normalised vector v (dim floats) with build exploration factor ef;
 * payload is stored with the node (the element, for the caller).  Returns
 * the new node's id.  l2 is the vector's norm before normalisation (kept
 * for VEMB). */
uint32_t hnsw_insert(struct hnsw *h, const float *v, float l2, void *payload, uint32_t ef);
/* Remove node id, repairing its neighbours' links. */
void hnsw_delete(struct hnsw *h, uint32_t id);

/* Up to k nearest nodes to the normalised query q (dim floats), ascending
 * distance, searching with ef = max(ef, k).  With filter set, only nodes
 * whose payload passes are returned, and the search stops after visiting
 * max_visit nodes (FILTER-EF; 0 = no limit).  Returns the count written to
 * out (capacity k). */
uint32_t hnsw_search(const struct hnsw *h, const float *q, uint32_t k, uint32_t ef, hnsw_filter_fn filter, void *fctx,
                     uint64_t max_visit, struct hnsw_result *out);
/* Exact top k by a linear scan of every node (VSIM TRUTH), same filter
 * rules. */
uint32_t hnsw_search_exact(const struct hnsw *h, const float *q, uint32_t k, hnsw_filter_fn filter, void *fctx,
                           struct hnsw_result *out);
/* Distance between the query and one node (VSIM ELE uses the node's own
 * vector as the query; see hnsw_get_vector). */
float hnsw_distance(const struct hnsw *h, const float *q, uint32_t id);

int hnsw_exists(const struct hnsw *h, uint32_t id);
void *hnsw_payload(const struct hnsw *h, uint32_t id);
void hnsw_set_payload(struct hnsw *h, uint32_t id, void *payload);
int hnsw_node_level(const struct hnsw *h, uint32_t id);
/* The node's links at level (ids), returns their number; NULL-safe max. */
uint32_t hnsw_links(const struct hnsw *h, uint32_t id, int level, const uint32_t **links);
/* The stored vector as normalised floats (dequantised; BIN gives +-1/sqrt
 * (dim)), dim floats into out; returns the pre-normalisation l2. */
float hnsw_get_vector(const struct hnsw *h, uint32_t id, float *out);
/* The raw stored form (VEMB RAW): pointer and byte length; for Q8 *range
 * is the quantisation range (max |component|), else 0.  F32 gives the
 * floats reassembled from their planes into the calling thread's scratch:
 * valid until that thread's next hnsw_raw call. */
const void *hnsw_raw(const struct hnsw *h, uint32_t id, size_t *len, float *range);
/* A random live node (uniform over ids, rejection of holes); HNSW_NONE
 * when empty.  rnd is a random 64-bit number from the caller. */
uint32_t hnsw_random_node(const struct hnsw *h, uint64_t rnd);

/* ---------------------------------------------------- persistence ---
 * The graph as it is (no rebuild on load): parameters, entry point, then
 * each live node (id, level, l2, stored vector, links per level), little
 * endian.  The writer returns 0, or -1 to stop (hnsw_save returns -1).
 * hnsw_load validates everything (ids in range, no duplicates, links to
 * live nodes at levels they have, bidirectional links, entry point at the
 * top level) and returns NULL with a message in err on any damage; it
 * never crashes on a corrupt input.  Payloads are NULL after load: the
 * caller sets them (hnsw_set_payload) from its own element records, which
 * it saves with their node ids. */
typedef int (*hnsw_write_fn)(void *ctx, const void *p, size_t n);
typedef int (*hnsw_read_fn)(void *ctx, void *p, size_t n); /* 0 ok, -1 short/err */
int hnsw_save(const struct hnsw *h, hnsw_write_fn w, void *ctx);
struct hnsw *hnsw_load(hnsw_read_fn r, void *ctx, char *err, size_t errlen);
/* hnsw_load when the reader can supply at most max_bytes: node and free-id
 * counts that could not fit in them are refused before anything is built. */
struct hnsw *hnsw_load_limit(hnsw_read_fn r, void *ctx, uint64_t max_bytes, char *err, size_t errlen);
/* The trailer checksum folds each unit the writer emits (one call per
 * write) into the running state s with this step (exposed for tests that
 * damage a saved graph and recompute the trailer). */
uint64_t hnsw_hash_unit(uint64_t s, const void *p, size_t n);
/* Deep copy (COPY); payloads copied as pointers, the caller replaces them. */
struct hnsw *hnsw_dup(const struct hnsw *h);

/* Check the invariants (tests, DEBUG): links bidirectional, no self or
 * duplicate links, levels consistent, link counts within M / 2*M, entry
 * point at max level, every live node reachable from the entry at level
 * 0.  Returns 0, or -1 with a description in err. */
int hnsw_check(const struct hnsw *h, char *err, size_t errlen);

/* Free the calling thread's search scratch (visited tags, heaps); call
 * when a thread that searched exits.  (Addition by H1.) */
void hnsw_thread_cleanup(void);

#endif
