/* t_set.h - set command handlers and the helpers other modules use.
 * (Owned by t_set.c; its command table rows are in t_set.tab.) */
#ifndef HK_T_SET_H
#define HK_T_SET_H

#include "../server.h"

#endif
