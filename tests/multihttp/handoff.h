/* Test stand-in for the shim's takeover: hands a connected upstream socket to the engine with a fresh socketpair. */
#ifndef MHTTP_TESTS_MULTIHTTP_HANDOFF_H
#define MHTTP_TESTS_MULTIHTTP_HANDOFF_H

#include <criterion/criterion.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "mh_conn.h"
#include "mh_engine.h"

/* The test's engine, made on first use with hooks (copied): criterion runs each test in a
 * process of its own, so every test starts without one. */
static struct mh_engine *test_engine;
static inline struct mh_engine *test_engine_with(const struct mh_engine_hooks *hooks) {
  if (!test_engine)
    cr_assert_eq(mh_engine_new(hooks, &test_engine), 0);
  return test_engine;
}

/* The engine takes `up` and its end of the pair; returns the program's end. The engine
 * recognises the program's end by device and inode (it resets it on upstream RST). *engine_end
 * (when not NULL): the engine's end's number, for a test that shapes that socket. */
static inline int hand_to_engine_at(int up, int *engine_end) {
  int sp[2];
  cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  struct mh_conn *c = mh_conn_new();
  c->app_fd = sp[0];
  struct stat st;
  fstat(sp[0], &st);
  c->app_dev = st.st_dev;
  c->app_ino = st.st_ino;
  if (engine_end)
    *engine_end = sp[1];
  cr_assert_eq(mh_engine_submit(test_engine, sp[1], up, c), 0);
  return sp[0];
}

static inline int hand_to_engine(int up) { return hand_to_engine_at(up, NULL); }

#endif
