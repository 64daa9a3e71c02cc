/* main.c - entry point.  One binary, three tools: run as hotkv-check-rdb or
 * hotkv-check-aof (Makefile symlinks) it checks a file instead of serving. */
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
    if (strstr(name, "hotkv-check-rdb") && rdb_check_main)
        return rdb_check_main(argc, argv);
    if (strstr(name, "hotkv-check-aof") && aof_check_main)
        return aof_check_main(argc, argv);
    return server_main(argc, argv);
}
