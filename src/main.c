/* main.c - entry point.  One binary, three tools: run as hotkv-check-rdb or
 * hotkv-check-aof (Makefile symlinks) it checks a file instead of serving;
 * Redis's names (redis-check-rdb, redis-check-aof) work too, so links made
 * for a Redis install, or tools that call them, reach the same checks. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

/* persist/rdb_check.c and persist/aof_check.c. */
int rdb_check_main(int argc, char **argv) __attribute__((weak));
int aof_check_main(int argc, char **argv) __attribute__((weak));

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/');
    name = name ? name + 1 : argv[0];
    server_wire(); /* the check tools load values too */
    if ((strstr(name, "hotkv-check-rdb") || strstr(name, "redis-check-rdb")) && rdb_check_main)
        return rdb_check_main(argc, argv);
    if ((strstr(name, "hotkv-check-aof") || strstr(name, "redis-check-aof")) && aof_check_main)
        return aof_check_main(argc, argv);
    return server_main(argc, argv);
}
