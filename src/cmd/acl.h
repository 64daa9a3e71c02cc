/* cmd/acl.h - Redis 7.2 ACLs: users, their rules and the permission
 * check of every command (cmd/acl.c has the design and the locking rule).
 *
 * The dispatcher's only cost for a client whose user may run everything
 * (+@all ~* &*, the default user as shipped) is the test of c->acl_fast;
 * everything else here is the slow path. */
#ifndef HK_CMD_ACL_H
#define HK_CMD_ACL_H

#include <stddef.h>

struct client;
struct cmd;

/* Log contexts (ACL LOG "context"). */
#define ACL_CTX_TOPLEVEL 0
#define ACL_CTX_LUA 1
#define ACL_CTX_MULTI 2

/* acl-pubsub-default (1: resetchannels, Redis 7's default) and
 * acllog-max-len: written by CONFIG SET (config/), read here. */
extern int acl_pubsub_default;
extern long long acl_log_max_len;

/* Start-up (cmd_init): the default user, +@all ~* &* on nopass. */
void acl_init(void);
/* requirepass: the default user's password, len bytes (binary-safe;
 * 0 or NULL: nopass). */
void acl_set_requirepass(const char *pw, size_t len);

/* cmd_execute's slow path, when !c->acl_fast: binds a fresh connection to
 * the default user (and its authenticated state), then, once it is
 * authenticated, checks cmd against its user's rules.  0: go on; -1: a
 * NOPERM reply was written (and logged). */
int acl_gate(struct client *c, const struct cmd *cmd);
/* EXEC, per queued command (c->argv is that command): 0 run it, -1 the
 * "ACLs rules changed" error was written. */
int acl_check_exec(struct client *c, const struct cmd *cmd);
/* redis.call from a script run by caller (fc holds the command line):
 * NULL when allowed, else the error text ("ACL failure in script: ..."). */
const char *acl_check_script(struct client *caller, struct client *fc, const struct cmd *cmd);
/* Whether caller's user may run fc's line as cmd: 1 or 0, nothing logged
 * (redis.acl_check_cmd). */
int acl_allows(struct client *caller, struct client *fc, const struct cmd *cmd);

/* SORT BY / GET patterns (they reach any key): whether c's user has a
 * selector allowing this SORT with read access to every key, as Redis. */
int acl_sort_patterns_allowed(struct client *c);
/* Blocked commands (cmd/blocking.c): a counted reference to c's user
 * (NULL when none), dropped by acl_user_unref() from any thread; and the
 * check when a waiter is served (any thread; fake holds its command line):
 * 0 allowed, -1 a NOPERM reply was written into fake->out (and logged). */
struct acl_user *acl_user_ref(struct client *c);
void acl_user_unref(struct acl_user *u);
int acl_check_served(struct acl_user *u, struct client *fake, const struct cmd *cmd);
/* AUTH / HELLO AUTH: 0 authenticated as user, -1 WRONGPASS (logged). */
int acl_authenticate(struct client *c, const char *user, size_t ulen, const char *pass, size_t plen);
/* tls-auth-clients-user CN: the handshake gave c a verified certificate
 * whose CN is name: c becomes that user if it exists and is on, else it
 * stays as it is and the denial is logged (reason "tls-cert"). */
void acl_authenticate_cert(struct client *c, const char *name, size_t len);
/* Whether the default user is nopass (AUTH <password> alone). */
int acl_default_nopass(void);
/* RESET: back to the default user. */
void acl_client_reset(struct client *c);
/* Client close (owner thread): drop its user reference. */
void acl_client_gone(struct client *c);
/* c's user name (CLIENT LIST user=, WHOAMI). */
const char *acl_client_user(const struct client *c);
int acl_user_exists(const char *name, size_t len);
/* Whether c's user has the skip-sanitize-payload flag (RESTORE under
 * sanitize-dump-payload clients). */
int acl_skip_sanitize(const struct client *c);

void acl_command(struct client *c);
/* INFO stats: denials by reason (auth, command, key, channel, tls-cert). */
void acl_denied_counts(long long out[5]);

/* aclfile (config/ owns the string; "" none).  Config-file "user" lines
 * are validated and kept by acl_config_user() (0, or -1 with Redis's
 * message), then applied with the ACL file by acl_load_at_startup()
 * (server.c, before the workers; -1: the reasons were logged, exit). */
extern char *acl_filename;
int acl_config_user(int argc, char **argv, char *err, size_t errlen);
int acl_load_at_startup(void);
/* Every user as a "user <name> <rules>" line (heap strings, CONFIG
 * REWRITE): the count, the array in *out. */
int acl_user_lines(char ***out);

#endif
