/* t_hash.c - the hash type (its commands arrive in the next commits). */
#include "../db/object.h"
#include "commands.h"

const struct type_ops hash_type_ops = {NULL, NULL, NULL, NULL, NULL};

long hash_expire_fields(struct entry *e, unsigned slot, long long now, int *empty)
{
    (void)e, (void)slot, (void)now;
    *empty = 0;
    return 0;
}
