/* The fd table: states, dup bookkeeping and epoll records follow the descriptors. */
#include <criterion/criterion.h>

#include "mh_conn.h"
#include "shim_fdtab.h"

Test(fdtab, untouched_fds_have_no_state) {
  cr_assert_eq(shim_fd_state(7), SHIM_FD_NONE);
  cr_assert_null(shim_fd_peek(-1));
  cr_assert_null(shim_fd_get(1 << 24));
}

Test(fdtab, dup_of_taken_shares_the_connection) {
  struct shim_fd *e = shim_fd_get(10);
  struct mh_conn *c = mh_conn_new();
  e->conn = c;
  atomic_store(&e->state, SHIM_FD_TAKEN);
  shim_fd_dup(10, 11);
  cr_assert_eq(shim_fd_state(11), SHIM_FD_TAKEN);
  cr_assert_eq(shim_fd_peek(11)->conn, c);
  cr_assert_eq(atomic_load(&c->refs), 2);
  shim_fd_forget(10);
  cr_assert_eq(shim_fd_state(10), SHIM_FD_NONE);
  cr_assert_eq(atomic_load(&c->refs), 1);
  shim_fd_forget(11);
}

Test(fdtab, dup_of_eligible_makes_it_untouchable) {
  struct shim_fd *e = shim_fd_get(20);
  atomic_store(&e->state, SHIM_FD_ELIGIBLE);
  shim_fd_dup(20, 21);
  cr_assert_eq(shim_fd_state(20), SHIM_FD_NONE);
  cr_assert_eq(shim_fd_state(21), SHIM_FD_NONE);
}

Test(fdtab, epoll_records_add_mod_del_overflow) {
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 42};
  shim_fd_epoll(3, EPOLL_CTL_ADD, 30, &ev);
  ev.events = EPOLLOUT;
  shim_fd_epoll(3, EPOLL_CTL_MOD, 30, &ev);
  struct shim_fd *e = shim_fd_peek(30);
  cr_assert_eq(e->nep, 1);
  cr_assert_eq(e->ep[0].ev.events, EPOLLOUT);
  cr_assert_eq(e->ep[0].ev.data.u64, 42);
  shim_fd_epoll(3, EPOLL_CTL_DEL, 30, NULL);
  cr_assert_eq(e->nep, 0);
  for (int i = 0; i < SHIM_EPOLL_MAX + 1; i++)
    shim_fd_epoll(100 + i, EPOLL_CTL_ADD, 30, &ev);
  cr_assert(e->ep_overflow);
  shim_fd_forget(30);
  cr_assert_eq(e->nep, 0);
  cr_assert(!e->ep_overflow);
}
