/* config.h - the configuration table: parsing of redis.conf-style files and
 * --name value arguments, CONFIG GET/SET/RESETSTAT.
 *
 * Every parameter is one row of a table (name, type, pointer, bounds,
 * mutability), so CONFIG GET, CONFIG SET, the file parser and the argument
 * parser share one definition.  Thread: parsing happens in main() before
 * workers start; CONFIG SET runs on a worker while others read the values.
 * Values read on the hot path are plain ints/longs written in one store
 * (x86-64 word writes do not tear); string values are swapped, and the old
 * string is kept alive (leaked by design, bounded by the number of CONFIG
 * SETs) so a concurrent reader never sees freed memory. */
#ifndef HK_CONFIG_H
#define HK_CONFIG_H

#include <stddef.h>

struct client;

void config_defaults(void);
/* Load a file; returns 0 or -1 with a message in err. */
int config_load_file(const char *path, char *err, size_t errlen);
/* Apply "name arg ..." (one line's words); 0 or -1 with err. */
int config_apply(int argc, char **argv, char *err, size_t errlen);
/* Parse argv of main(): [config-file] [--name value ...]. */
int config_from_args(int argc, char **argv, char *err, size_t errlen);
void config_command(struct client *c);

/* shutdown-on-sigint / shutdown-on-sigterm: 0 ("default": save if there
 * are save points) or SHUTDOWN_FLAG_* bits (server.h); read by server.c
 * when the signal arrives. */
extern int config_shutdown_on_sigint, config_shutdown_on_sigterm;
/* always-show-logo: server.c prints its start-up banner even when the log
 * is not a terminal. */
int config_always_show_logo(void);
#endif
