/* log.h - redis-style log lines ("pid:role dd Mon yyyy hh:mm:ss.mmm * msg")
 * to stdout or --logfile.  Thread-safe: each line is one write(2). */
#ifndef HK_LOG_H
#define HK_LOG_H

enum { LL_DEBUG = 0, LL_VERBOSE, LL_NOTICE, LL_WARNING, LL_NOTHING };

int log_open(const char *path); /* NULL or "" = stdout; returns 0 or -1 */
void log_set_level(int level);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text as it is, with no line prefix (Redis's LL_RAW), if level is logged. */
void log_raw(int level, const char *text);

#endif
