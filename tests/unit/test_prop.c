/* test_prop.c - the propagation state machine (persist/prop.c) without a
 * server: what reaches the sink for a call that changed something or not,
 * prevent/force, rewrites, units (MULTI/EXEC only around more than one
 * command, nesting), the argument builder, the AOF-loading switch, and the
 * per-thread change counters summed by prop_dirty_total(). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "persist/prop.h"
#include "cmd/cmd.h"
#include "test.h"

/* What the sink saw: one line per command, "db|arg arg arg". */
static char seen[65536];
static size_t seen_len;
static int seen_cmds;

static void capture(int db, int argc, const char *const *argv, const size_t *lens)
{
    int n = snprintf(seen + seen_len, sizeof(seen) - seen_len, "%d|", db);
    seen_len += (size_t)n;
    for (int i = 0; i < argc; i++) {
        if (seen_len + lens[i] + 2 >= sizeof(seen))
            break;
        memcpy(seen + seen_len, argv[i], lens[i]);
        seen_len += lens[i];
        seen[seen_len++] = i + 1 < argc ? ' ' : '\n';
    }
    seen[seen_len] = 0;
    seen_cmds++;
}

static void reset(void)
{
    prop_sink = capture;
    seen_len = 0;
    seen[0] = 0;
    seen_cmds = 0;
    prop_cmd_flags = 0;
}

static struct cmd write_cmd = {.name = "set", .flags = CMD_WRITE};
static struct cmd read_cmd = {.name = "get", .flags = CMD_READONLY};

static void client_with(struct client *c, const struct cmd *cmd, int argc, const char **argv, size_t *lens)
{
    memset(c, 0, sizeof(*c));
    c->cmd = cmd;
    c->argc = argc;
    c->argv = argv;
    c->argvlen = lens;
    c->db = 3;
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
}

TEST(test_prop_call_feeds_a_write_that_changed_something)
{
    reset();
    const char *argv[] = {"SET", "k", "v"};
    size_t lens[3];
    struct client c;
    client_with(&c, &write_cmd, 3, argv, lens);

    struct prop_mark m = prop_call_begin();
    prop_dirty_add(1);
    prop_call_end(&c, m, cmd_is_write);
    CHECK(strcmp(seen, "3|SET k v\n") == 0);

    /* Nothing changed: nothing fed. */
    reset();
    m = prop_call_begin();
    prop_call_end(&c, m, cmd_is_write);
    CHECK_EQ(seen_cmds, 0);

    /* A read that "changed" something (a lazy expiry counts no change,
     * but even so): reads are never fed. */
    client_with(&c, &read_cmd, 3, argv, lens);
    m = prop_call_begin();
    prop_dirty_add(1);
    prop_call_end(&c, m, cmd_is_write);
    CHECK_EQ(seen_cmds, 0);
    prop_sink = NULL;
}

TEST(test_prop_prevent_force_and_rewrite)
{
    reset();
    const char *argv[] = {"EXPIRE", "k", "10"};
    size_t lens[3];
    struct client c;
    client_with(&c, &write_cmd, 3, argv, lens);

    /* The handler feeds its own form and prevents the original. */
    struct prop_mark m = prop_call_begin();
    prop_dirty_add(1);
    prop_op_begin(c.db);
    prop_op_str("PEXPIREAT");
    prop_op_arg("k", 1);
    prop_op_ll(1234567890123LL);
    prop_op_end();
    prop_prevent();
    prop_call_end(&c, m, cmd_is_write);
    CHECK(strcmp(seen, "3|PEXPIREAT k 1234567890123\n") == 0);
    CHECK_EQ(prop_cmd_flags, 0);

    /* prop_rewrite = prevent + feed on c's db. */
    reset();
    const char *rw[] = {"DEL", "k"};
    size_t rwl[] = {3, 1};
    m = prop_call_begin();
    prop_dirty_add(1);
    prop_rewrite(&c, 2, rw, rwl);
    prop_call_end(&c, m, cmd_is_write);
    CHECK(strcmp(seen, "3|DEL k\n") == 0);

    /* Forced: fed though nothing changed (FLUSHALL on an empty server). */
    reset();
    m = prop_call_begin();
    prop_force();
    prop_call_end(&c, m, cmd_is_write);
    CHECK(strcmp(seen, "3|EXPIRE k 10\n") == 0);

    /* prop_self: fed at once, not again at the end. */
    reset();
    m = prop_call_begin();
    prop_dirty_add(1);
    prop_self(&c);
    CHECK_EQ(seen_cmds, 1);
    prop_call_end(&c, m, cmd_is_write);
    CHECK_EQ(seen_cmds, 1);
    prop_sink = NULL;
}

TEST(test_prop_units_wrap_more_than_one_command)
{
    reset();
    const char *a1[] = {"SET", "a", "1"}, *a2[] = {"SET", "b", "2"};
    size_t l1[3], l2[3];
    struct client c1, c2;
    client_with(&c1, &write_cmd, 3, a1, l1);
    client_with(&c2, &write_cmd, 3, a2, l2);

    /* Empty unit: nothing. */
    prop_unit_begin();
    prop_unit_end();
    CHECK_EQ(seen_cmds, 0);

    /* One command: as it is. */
    prop_unit_begin();
    struct prop_mark m = prop_call_begin();
    prop_dirty_add(1);
    prop_call_end(&c1, m, cmd_is_write);
    CHECK_EQ(seen_cmds, 0); /* kept until the unit ends */
    prop_unit_end();
    CHECK(strcmp(seen, "3|SET a 1\n") == 0);

    /* Two, the second in db 5, inside a nested unit: MULTI ... EXEC once,
     * at the outermost end, with no SELECT of their own (db -1). */
    reset();
    prop_unit_begin();
    m = prop_call_begin();
    prop_dirty_add(1);
    prop_call_end(&c1, m, cmd_is_write);
    prop_unit_begin();
    c2.db = 5;
    m = prop_call_begin();
    prop_dirty_add(1);
    prop_call_end(&c2, m, cmd_is_write);
    prop_unit_end();
    CHECK_EQ(seen_cmds, 0);
    prop_unit_end();
    CHECK(strcmp(seen, "-1|MULTI\n3|SET a 1\n5|SET b 2\n-1|EXEC\n") == 0);

    /* An unbalanced end is ignored. */
    reset();
    prop_unit_end();
    CHECK_EQ(seen_cmds, 0);
    prop_sink = NULL;
}

TEST(test_prop_nested_call_flags_are_restored)
{
    reset();
    const char *outer_argv[] = {"EVAL", "x", "0"}, *inner_argv[] = {"SPOP", "s"};
    size_t ol[3], il[2];
    struct client outer, inner;
    static struct cmd eval_cmd = {.name = "eval", .flags = 0};
    client_with(&outer, &eval_cmd, 3, outer_argv, ol);
    client_with(&inner, &write_cmd, 2, inner_argv, il);

    struct prop_mark mo = prop_call_begin();
    prop_force(); /* the outer call's own flag */
    struct prop_mark mi = prop_call_begin();
    CHECK_EQ(prop_cmd_flags, 0);
    prop_dirty_add(1);
    prop_feed(inner.db, 2, (const char *const[]){"SREM", "s"}, (const size_t[]){4, 1});
    prop_prevent();
    prop_call_end(&inner, mi, cmd_is_write);
    CHECK_EQ(prop_cmd_flags, PROP_FORCE);
    prop_call_end(&outer, mo, cmd_is_write); /* EVAL is no write: not fed */
    CHECK(strcmp(seen, "3|SREM s\n") == 0);
    prop_sink = NULL;
}

TEST(test_prop_builder_many_and_big_arguments)
{
    reset();
    static char big[200000];
    memset(big, 'x', sizeof(big));
    prop_op_begin(0);
    prop_op_str("SREM");
    prop_op_arg("key", 3);
    for (int i = 0; i < 100; i++)
        prop_op_ll(i);
    prop_op_arg(big, 10);
    prop_op_arg("", 0);
    prop_op_end();
    CHECK_EQ(seen_cmds, 1);
    CHECK(strncmp(seen, "0|SREM key 0 1 2 ", 17) == 0);
    CHECK(strstr(seen, " 98 99 xxxxxxxxxx \n") != NULL);

    /* A big argument, then a small command: the builder starts clean. */
    reset();
    prop_op_begin(1);
    prop_op_arg(big, sizeof(big) - 1);
    prop_op_end();
    reset();
    prop_op_begin(1);
    prop_op_str("PING");
    prop_op_end();
    CHECK(strcmp(seen, "1|PING\n") == 0);
    prop_sink = NULL;
}

TEST(test_prop_unit_keeps_copies_of_arguments)
{
    reset();
    char key[8] = "k1";
    prop_unit_begin();
    prop_key_expired(2, key, 2);
    strcpy(key, "zz"); /* the expired entry's bytes are gone after the hook */
    prop_key_expired(2, key, 2);
    prop_unit_end();
    CHECK(strcmp(seen, "-1|MULTI\n2|DEL k1\n2|DEL zz\n-1|EXEC\n") == 0);
    prop_sink = NULL;
}

TEST(test_prop_nothing_while_loading)
{
    reset();
    const char *argv[] = {"SET", "k", "v"};
    size_t lens[3];
    struct client c;
    client_with(&c, &write_cmd, 3, argv, lens);
    db_loading = 1;
    struct prop_mark m = prop_call_begin();
    prop_dirty_add(1);
    prop_call_end(&c, m, cmd_is_write);
    prop_key_expired(0, "k", 1);
    prop_unit_begin();
    prop_feed(0, 3, argv, lens);
    prop_unit_end();
    db_loading = 0;
    CHECK_EQ(seen_cmds, 0);
    CHECK_EQ(db_already_expired(0), 1);
    db_loading = 1;
    CHECK_EQ(db_already_expired(0), 0); /* replaying: nothing is already expired */
    db_loading = 0;
    prop_sink = NULL;
}

static void *counting_thread(void *arg)
{
    (void)arg;
    prop_thread_register();
    prop_dirty_add(1000);
    prop_thread_unregister();
    return NULL;
}

TEST(test_prop_dirty_total_sums_threads)
{
    prop_thread_register();
    unsigned long long t0 = prop_dirty_total();
    prop_dirty_add(5);
    CHECK_EQ(prop_dirty_total() - t0, 5);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, counting_thread, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    /* Exited threads' counts are kept. */
    CHECK_EQ(prop_dirty_total() - t0, 4005);
    prop_thread_unregister();
    CHECK_EQ(prop_dirty_total() - t0, 4005);
}
