/* t_list.h - list command handlers and the helpers other modules use.
 * (Owned by t_list.c; its command table rows are in t_list.tab.) */
#ifndef HK_T_LIST_H
#define HK_T_LIST_H

#include "../server.h"

#endif
