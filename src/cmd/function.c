/* function.c - the FUNCTION command family.
 *
 * Lua and function libraries arrive with issue 5; until then the server
 * holds no libraries, and the subcommands registered here are exactly the
 * ones that are complete without an engine: FLUSH (removes every library:
 * there are none) and HELP.  LOAD, LIST, DUMP, RESTORE, STATS and DELETE
 * are unknown subcommands until the engine exists, so no client is told a
 * library was stored when it was not. */
#include "commands.h"

void function_command(struct client *c)
{
    const char *sub = c->cmd->name + 9; /* after "function|" */
    if (sub[0] == 'f') {
        if (c->argc > 3 || (c->argc == 3 && !arg_is(c, 2, "async") && !arg_is(c, 2, "sync"))) {
            reply_error(&c->out, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
            return;
        }
        reply_ok(&c->out);
        return;
    }
    static const char *lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "HELP",
        "    Print this help.",
    };
    reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        reply_status(&c->out, lines[i]);
}
