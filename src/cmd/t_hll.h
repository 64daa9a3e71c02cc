/* t_hll.h - the HyperLogLog command handlers (cmd/t_hll.c; table rows in
 * t_hll.tab, COMMAND DOCS rows in t_hll.docs).  The value layer is
 * types/hll.h. */
#ifndef HK_T_HLL_H
#define HK_T_HLL_H

#include "cmd.h"

cmd_fn pfadd_command, pfcount_command, pfmerge_command, pfdebug_command, pfselftest_command;

#endif
