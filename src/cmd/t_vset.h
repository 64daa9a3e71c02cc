/* t_vset.h - vector sets (Redis 8 VADD/VSIM/...): the value behind an
 * OBJ_VSET key, and what persistence (persist/rdb_types.c, DUMP/RESTORE,
 * the AOF rewrite) needs of it.  Commands in t_vset.c (rows in t_vset.tab,
 * COMMAND DOCS in t_vset.docs); the index is ds/hnsw.h, FILTER is
 * ds/vexpr.h.
 *
 * Ownership and locking (docs/architecture.md, "Vector sets"):
 * - The key's entry holds one reference to its struct vset; a command that
 *   searches without its slot lock (VSIM outside MULTI/scripts) takes
 *   another under the slot lock, drops the slot lock, and releases the
 *   reference when done.  The last reference frees the set.
 * - The set's rwlock guards the index, the element table and attributes:
 *   readers (VSIM, VEMB, VLINKS, VGETATTR, ...) share it; writers (VADD,
 *   VREM, VSETATTR) hold the key's slot lock and then take it exclusively.
 *   Order: slot lock, then set lock; nobody holding a set lock waits for a
 *   slot lock. */
#ifndef HK_T_VSET_H
#define HK_T_VSET_H

#include <stddef.h>
#include <stdint.h>

#include "../ds/hnsw.h"

struct vset;
struct client;

/* The entry encoding of a vector-set key (OBJECT ENCODING "raw", as Redis
 * reports a module value): ENC_RAW of db/entry.h. */
#define VSET_ENC 0

/* Command handlers (rows in t_vset.tab). */
void vadd_command(struct client *c);
void vrem_command(struct client *c);
void vsim_command(struct client *c);
void vcard_command(struct client *c);
void vdim_command(struct client *c);
void vemb_command(struct client *c);
void vinfo_command(struct client *c);
void vlinks_command(struct client *c);
void vsetattr_command(struct client *c);
void vgetattr_command(struct client *c);
void vrandmember_command(struct client *c);
void vismember_command(struct client *c);
void vrange_command(struct client *c);

/* Creation for loaders: an empty set owning index h (its dim is the
 * stored, possibly reduced, dimension).  reduce_from > 0 with proj (the
 * projection, reduce_from * dim floats, copied: dim rows of reduce_from
 * columns, row-major, as Redis stores it: stored[i] = sum over j of
 * proj[i * reduce_from + j] * input[j]) when the set was made with REDUCE.
 * Returns the set with one reference. */
struct vset *vset_create(struct hnsw *h, uint32_t reduce_from, const float *proj);
/* Attach an element record to node id of the set's index (loaders): name,
 * optional JSON attributes (attr NULL or alen 0: none).  Returns -1 if the
 * name is already present, the id is not a live node or already has an
 * element. */
int vset_load_elem(struct vset *vs, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id);
/* After the last vset_load_elem: -1 (message in err) unless every live
 * node has exactly one element. */
int vset_load_done(struct vset *vs, char *err, size_t errlen);

/* Reading a set for saving (the caller holds the key's slot lock, so no
 * writer runs): the index, the projection, and every element. */
struct hnsw *vset_index(const struct vset *vs);
uint32_t vset_reduce_from(const struct vset *vs, const float **proj);
typedef void (*vset_elem_fn)(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id);
void vset_foreach(const struct vset *vs, vset_elem_fn fn, void *ctx);
uint64_t vset_card(const struct vset *vs);

void vset_incref(struct vset *vs);
void vset_decref(struct vset *vs); /* frees on the last reference */

#endif
