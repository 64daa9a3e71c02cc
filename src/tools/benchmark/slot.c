/* slot.c - see slot.h.  CRC16-XMODEM by a 256-entry table built on first
 * use from the polynomial (bitwise, MSB first). */
#include "slot.h"

#include <pthread.h>
#include <string.h>

static uint16_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint16_t c = (uint16_t)(i << 8);
        for (int b = 0; b < 8; b++)
            c = (uint16_t)((c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1);
        crc_table[i] = c;
    }
}

uint16_t bm_crc16(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint16_t crc = 0;
    pthread_once(&crc_once, crc_init);
    for (size_t i = 0; i < len; i++)
        crc = (uint16_t)((crc << 8) ^ crc_table[((crc >> 8) ^ p[i]) & 0xff]);
    return crc;
}

unsigned bm_key_slot(const void *key, size_t len)
{
    const char *k = key;
    const char *open = memchr(k, '{', len);
    if (open) {
        size_t start = (size_t)(open - k) + 1;
        const char *close = memchr(k + start, '}', len - start);
        if (close && close > k + start)
            return bm_crc16(k + start, (size_t)(close - (k + start))) & (BM_NSLOTS - 1);
    }
    return bm_crc16(k, len) & (BM_NSLOTS - 1);
}

int bm_parse_redirect(const char *msg, size_t len, unsigned *slot, char *host, size_t hostcap,
                      int *port)
{
    int kind;
    size_t i;
    if (len > 6 && !memcmp(msg, "MOVED ", 6)) {
        kind = BM_REDIR_MOVED;
        i = 6;
    } else if (len > 4 && !memcmp(msg, "ASK ", 4)) {
        kind = BM_REDIR_ASK;
        i = 4;
    } else {
        return BM_REDIR_NONE;
    }
    unsigned s = 0;
    size_t d0 = i;
    while (i < len && msg[i] >= '0' && msg[i] <= '9' && i - d0 < 6)
        s = s * 10 + (unsigned)(msg[i++] - '0');
    if (i == d0 || s >= BM_NSLOTS || i >= len || msg[i] != ' ')
        return BM_REDIR_NONE;
    i++;
    /* host:port, up to the end or the next blank; port after the last ':' */
    size_t e = i;
    while (e < len && msg[e] != ' ' && msg[e] != '\r' && msg[e] != '\n')
        e++;
    size_t colon = e;
    while (colon > i && msg[colon - 1] != ':')
        colon--;
    if (colon == i) /* no ':' at all */
        return BM_REDIR_NONE;
    size_t hl = colon - 1 - i;
    long p = 0;
    if (colon == e)
        return BM_REDIR_NONE;
    for (size_t j = colon; j < e; j++) {
        if (msg[j] < '0' || msg[j] > '9' || p > 65535)
            return BM_REDIR_NONE;
        p = p * 10 + (msg[j] - '0');
    }
    if (p <= 0 || p > 65535 || hl + 1 > hostcap)
        return BM_REDIR_NONE;
    const char *h = msg + i;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') { /* [::1]:port */
        h++;
        hl -= 2;
    }
    if (hl == 1 && h[0] == '?')
        hl = 0;
    memcpy(host, h, hl);
    host[hl] = 0;
    *slot = s;
    *port = (int)p;
    return kind;
}
