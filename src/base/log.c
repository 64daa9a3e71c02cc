/* log.c - see log.h. */
#include "log.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_fd = 1;
static _Atomic int log_level = LL_NOTICE; /* CONFIG SET loglevel from any worker */

int log_open(const char *path)
{
    int fd;
    if (!path || !path[0]) {
        log_fd = 1;
        return 0;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    log_fd = fd;
    return 0;
}

void log_set_level(int level)
{
    log_level = level;
}

void log_raw(int level, const char *text)
{
    if (level < log_level)
        return;
    if (write(log_fd, text, strlen(text)) < 0) {
        /* Nowhere left to report a failed log write. */
    }
}

void log_msg(int level, const char *fmt, ...)
{
    static const char marks[] = ".-*#";
    char line[1024];
    struct timeval tv;
    struct tm tm;
    va_list ap;
    int n;

    if (level < log_level)
        return;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    n = snprintf(line, sizeof(line), "%d:M ", (int)getpid());
    n += (int)strftime(line + n, sizeof(line) - (size_t)n, "%d %b %Y %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03d %c ", (int)(tv.tv_usec / 1000), marks[level]);
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (write(log_fd, line, (size_t)n) < 0) {
        /* Nowhere left to report a failed log write. */
    }
}
