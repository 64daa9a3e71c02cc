/* loop.h - cmd/'s side of the event loop's hook interface (net/hooks.h).
 *
 * The loop in net/ knows clients and sockets only; what the command layer
 * must do at its points (run a command, forget a closing client's MULTI
 * queue, subscriptions, tracking state and blocked waiter, time out
 * blocked clients, the features' cron) is gathered in cmd/loop.c and
 * installed once at start-up. */
#ifndef HK_CMD_LOOP_H
#define HK_CMD_LOOP_H

/* Install cmd/'s hooks into net/ (server start-up, before the workers
 * start; after cmd_init). */
void cmd_install_net_hooks(void);

#endif
