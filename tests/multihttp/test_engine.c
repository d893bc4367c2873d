/* Engine instances: freeing one resets its sessions and closes every descriptor it owned (its rtnetlink watch's included), engines are apart, and a fork child's engine starts afresh. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_conn.h"
#include "mh_engine.h"
#include "sockio.h"

#define MAX_OWN 64

/* Descriptors the engine announced through own_fd (one engine per test). */
static int own[MAX_OWN], nown;
static void record_own(int fd) {
  if (nown < MAX_OWN)
    own[nown++] = fd;
}

static struct mh_config cfg;

static struct mh_engine *relay_engine(void) {
  mh_config_defaults(&cfg);
  cfg.split = 0;
  struct mh_engine_hooks hooks = {.cfg = &cfg, .own_fd = record_own};
  struct mh_engine *e;
  cr_assert_eq(mh_engine_new(&hooks, &e), 0);
  return e;
}

/* A session of e: *app the program's end, *srv the origin's; eng_fds[0..1] what e took. */
static void session(struct mh_engine *e, int *app, int *srv, int eng_fds[2]) {
  int ls, sp[2];
  int up = loopback_connect(srv, &ls);
  close(ls);
  cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  struct mh_conn *c = mh_conn_new();
  struct stat st;
  fstat(sp[0], &st);
  c->app_fd = sp[0];
  c->app_dev = st.st_dev;
  c->app_ino = st.st_ino;
  cr_assert_eq(mh_engine_submit(e, sp[1], up, c), 0);
  eng_fds[0] = sp[1];
  eng_fds[1] = up;
  *app = sp[0];
  timeouts(*app);
  timeouts(*srv);
}

/* One request and its answer through the session. */
static void exchange(int app, int srv) {
  static const char req[] = "GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n";
  static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  send_str(app, req);
  expect_str(srv, req);
  send_str(srv, resp);
  expect_str(app, resp);
}

static int is_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

Test(engine, an_engine_nobody_used_owns_no_descriptor) {
  struct mh_engine *e = relay_engine();
  cr_assert_eq(nown, 0, "no loop, no thread, no descriptor before the first submit");
  mh_engine_free(e);
  mh_engine_free(NULL);
}

Test(engine, free_resets_its_sessions_and_closes_what_it_owned) {
  struct mh_engine *e = relay_engine();
  int app, srv, took[2];
  session(e, &app, &srv, took);
  exchange(app, srv);
  cr_assert_geq(nown, 2, "the loop's descriptor and its wake-up were announced");
  int netlink = 0;
  for (int i = 0; i < nown; i++) {
    int dom = 0;
    socklen_t l = sizeof dom;
    netlink += getsockopt(own[i], SOL_SOCKET, SO_DOMAIN, &dom, &l) == 0 && dom == AF_NETLINK;
  }
  cr_assert_eq(netlink, 1, "the rtnetlink watch's socket was announced (mh_netwatch.c)");
  mh_engine_free(e);
  char c;
  cr_assert_leq(recv(srv, &c, 1, 0), 0, "the origin sees its connection end");
  cr_assert_leq(recv(app, &c, 1, 0), 0, "the program sees its connection end");
  cr_assert(!is_open(took[0]) && !is_open(took[1]), "the submitted descriptors are closed");
  for (int i = 0; i < nown; i++)
    cr_assert(!is_open(own[i]), "descriptor %d the engine announced is closed", own[i]);
  close(app);
  close(srv);
}

/* Two engines at once: each serves its own session, and freeing one leaves the other's alone. */
Test(engine, two_engines_are_apart) {
  struct mh_engine *a = relay_engine(), *b = relay_engine();
  int app_a, srv_a, app_b, srv_b, took[2];
  session(a, &app_a, &srv_a, took);
  session(b, &app_b, &srv_b, took);
  exchange(app_a, srv_a);
  exchange(app_b, srv_b);
  mh_engine_free(a);
  exchange(app_b, srv_b);
  cr_assert_eq(mh_engine_sessions(b), 1);
  mh_engine_free(b);
  close(app_a);
  close(srv_a);
  close(app_b);
  close(srv_b);
}

/* In the child: e forgets the parent's session and serves a connection of the child's own on a
 * fresh loop thread. 0 when it did. _exit: the abandoned parts are the parent's to free. */
static int child(struct mh_engine *e) {
  if (mh_engine_fork_child(e) < 0 || mh_engine_sessions(e) != 0)
    _exit(2);
  int app, srv, took[2];
  session(e, &app, &srv, took);
  exchange(app, srv);
  _exit(mh_engine_sessions(e) == 1 ? 0 : 3);
}

Test(engine, a_fork_child_starts_afresh_and_the_parent_goes_on) {
  struct mh_engine *e = relay_engine();
  int app, srv, took[2];
  session(e, &app, &srv, took);
  exchange(app, srv);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0)
    child(e);
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
  exchange(app, srv);
  mh_engine_free(e);
  close(app);
  close(srv);
}
