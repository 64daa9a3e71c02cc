/* t_list.c - the list type (its commands arrive in the next commits). */
#include "../db/object.h"
#include "commands.h"

const struct type_ops list_type_ops = {NULL, NULL, NULL, NULL, NULL};
