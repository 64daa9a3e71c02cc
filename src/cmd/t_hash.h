/* t_hash.h - hash command handlers and the helpers other modules use.
 * (Owned by t_hash.c; its command table rows are in t_hash.tab.) */
#ifndef HK_T_HASH_H
#define HK_T_HASH_H

#include "../server.h"

#endif
