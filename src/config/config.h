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
long long config_mem_parse(const char *s, int *ok);
/* The multiplier of a memory unit suffix ("", b, k, kb, m, mb, g, gb, any
 * case); 0 when u is not one. */
int config_mem_unit(const char *u, unsigned long long *mul);
/* enable-protected-configs / enable-debug-command / enable-module-command
 * values, as Redis 7: "local" allows loopback clients only. */
enum { CFG_ALLOW_NO = 0, CFG_ALLOW_YES = 1, CFG_ALLOW_LOCAL = 2 };
/* Redis's notion of a local client: its peer address is exactly
 * 127.0.0.1 or ::1 (an IPv4-mapped ::ffff:127.0.0.1 too); other
 * 127.0.0.0/8 addresses are not local.  HotKV has no unix socket. */
int client_is_local(const struct client *c);
int config_allows(int mode, const struct client *c);
/* Called after maxmemory is set (cmd/evict.c installs it). */
extern void (*config_maxmemory_hook)(void);

#endif
