/* types.c - registers the value types with the keyspace (types.h). */
#include "types.h"

#include "../db/entry.h"

void types_init(void)
{
    obj_register_type(OBJ_LIST, &list_type_ops);
    obj_register_type(OBJ_HASH, &hash_type_ops);
    obj_register_type(OBJ_SET, &set_type_ops);
    obj_register_type(OBJ_ZSET, &zset_type_ops);
    obj_register_type(OBJ_STREAM, &stream_type_ops);
    obj_register_type(OBJ_VSET, &vset_type_ops);
}
