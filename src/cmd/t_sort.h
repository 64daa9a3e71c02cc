/* t_sort.h - SORT and SORT_RO. */
#ifndef HK_T_SORT_H
#define HK_T_SORT_H

#include "../server.h"

#endif
