/* t_set.c - the set type (its commands arrive in the next commits). */
#include "../db/object.h"
#include "commands.h"

const struct type_ops set_type_ops = {NULL, NULL, NULL, NULL, NULL};
