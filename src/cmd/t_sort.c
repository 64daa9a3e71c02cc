/* t_sort.c - SORT and SORT_RO (next commits). */
#include "commands.h"
