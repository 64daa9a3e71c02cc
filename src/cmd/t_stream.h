/* t_stream.h - stream command handlers (t_stream.c; table rows in
 * t_stream.tab, COMMAND DOCS rows in t_stream.docs).  The value itself
 * (struct stream, consumer groups, PELs) is types/stream.h's. */
#ifndef HK_T_STREAM_H
#define HK_T_STREAM_H

#include "cmd.h"

cmd_fn xadd_command, xtrim_command, xdel_command, xlen_command, xrange_command, xrevrange_command, xread_command,
    xreadgroup_command, xsetid_command, xinfo_command, xgroup_command, xack_command, xpending_command,
    xclaim_command, xautoclaim_command;

/* Key positions of XREAD / XREADGROUP (the keys after STREAMS). */
int xread_getkeys(struct client *c, int *idx, int max);

#endif
