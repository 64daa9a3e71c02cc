/* t_zset.c - the zset type (its commands arrive in the next commits). */
#include "../db/object.h"
#include "commands.h"

const struct type_ops zset_type_ops = {NULL, NULL, NULL, NULL, NULL};
