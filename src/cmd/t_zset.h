/* t_zset.h - zset command handlers and the helpers other modules use.
 * (Owned by t_zset.c; its command table rows are in t_zset.tab.) */
#ifndef HK_T_ZSET_H
#define HK_T_ZSET_H

#include "../server.h"

#endif
