/* net/tls.h - TLS for client connections (OpenSSL from Debian's libssl).
 *
 * The settings (tls_cfg) are Redis 7.2's tls-* parameters; config/ owns
 * their rows and calls tls_apply() after a CONFIG SET changed any of them.
 * The server context (SSL_CTX) is built from them at start-up
 * (workers_start) and rebuilt by CONFIG SET: a new context is swapped in
 * for connections accepted from then on, while connected clients keep the
 * context their SSL was made from (OpenSSL counts its references), so a
 * certificate is rotated without dropping anybody.  A context that cannot
 * be built (a missing file, a key that does not match the certificate, an
 * unknown protocol or cipher) changes nothing and the reason is logged.
 *
 * A connection's SSL belongs to the worker that accepted it, as the rest
 * of its client (net/client.h); net/worker.c drives the non-blocking
 * handshake and the reads and writes through the functions below.
 * docs/architecture.md, "TLS", has the design. */
#ifndef HK_NET_TLS_H
#define HK_NET_TLS_H

#include <stddef.h>
#include <sys/types.h>

/* tls-auth-clients, in the order of its enum row (config/). */
enum { TLS_AUTH_NO = 0, TLS_AUTH_YES = 1, TLS_AUTH_OPTIONAL = 2 };
/* tls-auth-clients-user (Redis 8.6), in the order of its enum row. */
enum { TLS_AUTH_USER_OFF = 0, TLS_AUTH_USER_CN = 1 };

struct tls_settings {
    int port;                 /* tls-port: 0 = no TLS listener */
    char *cert_file, *key_file, *key_file_pass;
    char *client_cert_file, *client_key_file, *client_key_file_pass;
    char *dh_params_file, *ca_cert_file, *ca_cert_dir;
    char *protocols, *ciphers, *ciphersuites; /* NULL or "": OpenSSL's / Redis's defaults */
    int auth_clients;         /* TLS_AUTH_*: read at each accept */
    int auth_clients_user;    /* TLS_AUTH_USER_*: read at each handshake's end */
    int prefer_server_ciphers, session_caching, session_cache_size, session_cache_timeout;
    int replication, cluster; /* tls-replication (a replica dials its master over TLS) / tls-cluster (stored) */
};
extern struct tls_settings tls_cfg;

/* Redis's defaults (config_defaults). */
void tls_settings_defaults(void);
/* TLS is wanted (a context must exist): a TLS port, or TLS for
 * replication or the cluster bus. */
int tls_in_use(void);
/* Build the contexts from tls_cfg and install them (0), or log why not
 * and keep the old ones (-1).  reconfigure 0: only if there is none yet. */
int tls_configure(int reconfigure);

/* After CONFIG SET changed tls-* values (all of them already stored):
 * ctx_changed, the context's settings; port_changed, tls-port (old_port
 * its previous value).  The context is rebuilt when TLS is in use, the
 * listeners move, and only when both worked is the new context installed.
 * 0; or -1 (the context: "Unable to update TLS configuration...") or -2
 * (the listener, or the context the new port needed) with Redis's message
 * in err. */
int tls_apply(int ctx_changed, int port_changed, int old_port, char *err, size_t errlen);

/* CONFIG SET bind / tls-port (net/worker.c): every worker's TLS listeners
 * on bind:port (port 0: none), all-or-nothing; old_port is the port they
 * listen on now (a new port is probed first, see workers_rebind). */
int workers_rebind_tls(const char *bind, int port, int old_port);

/* ------------------------------------------------ one connection --- */
#define TLS_WANT_READ 1
#define TLS_WANT_WRITE 2

/* An SSL for an accepted socket, from the current context, with the
 * verification tls-auth-clients asks for; NULL if TLS is not configured. */
void *tls_conn_new(int fd);
/* An SSL for an outgoing connection (a replica's link to its master) on
 * a connected socket, from the client context (tls-client-cert-file, or
 * the server's certificate), verifying the peer against the CA; NULL if
 * TLS is not configured.  Its handshake: tls_conn_connect, as
 * tls_conn_accept.  Whichever thread uses a connection owns it; it may be
 * handed to another thread (a worker's replica connection to the
 * replication thread, the link thread's to worker 0) with nothing in
 * flight, and tls_conn_set_fd names the descriptor it uses from then on
 * (a dup). */
void *tls_conn_new_client(int fd);
int tls_conn_connect(void *ssl, int *want, char *err, size_t errlen);
void tls_conn_set_fd(void *ssl, int fd);
/* Free it; graceful sends a close_notify first (best effort, never
 * waits). */
void tls_conn_free(void *ssl, int graceful);
/* One step of the server handshake: 1 done, 0 not yet (*want: which
 * readiness to wait for), -1 failed (err says why). */
int tls_conn_accept(void *ssl, int *want, char *err, size_t errlen);
/* Plaintext in/out.  >0 bytes; 0: would block (*want: TLS_WANT_*); -1:
 * the peer closed or the connection failed. */
ssize_t tls_conn_read(void *ssl, void *buf, size_t n, int *want);
ssize_t tls_conn_write(void *ssl, const void *buf, size_t n, int *want);
/* Bytes OpenSSL holds for this connection that a read would return
 * without the socket being readable (epoll cannot see them). */
int tls_conn_has_pending(void *ssl);
/* io_uring reads (net/worker.c turn_io): n bytes the worker received from
 * the socket for this connection, at buf, which OpenSSL's next reads take
 * before the socket.  buf must stay valid until tls_conn_keep(), which
 * moves what OpenSSL has not read yet into the connection's own memory
 * (normally nothing: the worker reads until tls_conn_has_pending is 0).
 * tls_conn_fed: bytes fed and not read yet. */
void tls_conn_feed(void *ssl, const void *buf, size_t n);
size_t tls_conn_fed(void *ssl);
void tls_conn_keep(void *ssl);
/* The subject CN of the client certificate the handshake verified, into
 * buf (NUL-terminated): its length, or -1 if there is none (no
 * certificate, not verified, no CN, or a CN longer than cap - 1 or
 * holding a NUL). */
int tls_conn_peer_cn(void *ssl, char *buf, size_t cap);

#endif
