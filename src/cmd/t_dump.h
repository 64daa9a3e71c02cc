/* t_dump.h - DUMP and RESTORE (t_dump.c; rows in t_dump.tab / t_dump.docs). */
#ifndef HK_T_DUMP_H
#define HK_T_DUMP_H

#include "cmd.h"

cmd_fn dump_command, restore_command;

#endif
