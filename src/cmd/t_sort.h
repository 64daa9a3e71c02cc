/* t_sort.h - SORT and SORT_RO. */
#ifndef HK_T_SORT_H
#define HK_T_SORT_H

#include "cmd.h"

cmd_fn sort_command, sort_ro_command;

/* Declared keys: the key to sort and, for SORT, the last STORE
 * destination (Redis's rule).  BY/GET pattern keys are looked up under
 * their own slot locks by the handler (see t_sort.c). */
int sort_getkeys(struct client *c, int *idx, int max);
int sort_ro_getkeys(struct client *c, int *idx, int max);

#endif
