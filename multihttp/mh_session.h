/* A session: one taken-over program connection, its request/response framing and its queue of exchanges. */
#ifndef MH_SESSION_H
#define MH_SESSION_H
#include <stddef.h>
#include <sys/socket.h>
#include <uv.h>

struct mh_session;
struct mh_conn;
struct mh_engine;

/* Called when a session has freed itself (engine bookkeeping). Loop thread. */
typedef void (*mh_session_gone_cb)(struct mh_session *s, void *arg);

/* Starts relaying between prog_fd (the engine's end of the program's socketpair) and up_fd
 * (the program's connected TCP socket) on eng's loop. Takes ownership of both fds and one
 * reference to conn. Returns the session or NULL (fds closed, reference dropped). Loop thread. */
struct mh_session *mh_session_start(struct mh_engine *eng, unsigned id, int prog_fd, int up_fd, struct mh_conn *conn,
                                    mh_session_gone_cb gone, void *arg);
/* Ends s now as a reset would (the engine is stopping); gone runs once its handles closed. */
void mh_session_close(struct mh_session *s);

/* Queues bytes for the program (strategies call this). 0 or -ENOBUFS. Loop thread. */
int mh_session_emit(struct mh_session *s, const char *data, size_t len);
/* Queues bytes for the primary upstream connection. 0 or -ENOBUFS. Loop thread. */
int mh_session_send_upstream(struct mh_session *s, const char *data, size_t len);

unsigned mh_session_id(const struct mh_session *s);
/* The server the program connected to (its upstream may be a replacement still connecting).
 * 0 or -ENOTCONN. Loop thread. */
int mh_session_peer(const struct mh_session *s, struct sockaddr_storage *out);

/* 1 when everything the program wrote so far has been handed to the kernel upstream (the
 * exit drain waits for this). Loop thread. */
int mh_session_flushed(struct mh_session *s);

/* Session list links, owned by the engine. */
struct mh_session *mh_session_next(struct mh_session *s);
void mh_session_link(struct mh_session **head, struct mh_session *s);
void mh_session_unlink(struct mh_session **head, struct mh_session *s);

#endif
