/* types.h - the value-type layer as a whole (src/types/README.md).
 *
 * Each collection type's module (hash.c, list.c, set.c, zset.c, stream.c,
 * vset.c) defines its struct type_ops; types_init() hands them to db/
 * (obj_register_type), which calls them for every value it frees, copies,
 * measures or counts without knowing the layout. */
#ifndef HK_TYPES_H
#define HK_TYPES_H

#include "../db/object.h"

extern const struct type_ops list_type_ops, hash_type_ops, set_type_ops, zset_type_ops, stream_type_ops,
    vset_type_ops;

/* Register every type with db/ (start-up: server_wire(); the unit tests
 * and fuzz targets call it too).  Idempotent. */
void types_init(void);

#endif
