/* The fork gate (mh_fdgate.h): a fork waits for every thread inside, a waiting fork holds new entries off, entries nest, a fork from inside the gate does not wait for itself, and the child starts with it open. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mh_fdgate.h"

static atomic_int forked;        /* the forking thread holds the gate */
static atomic_int entered;       /* the late entrant is inside */
static atomic_int release_fork;  /* the forking thread may let go */
static atomic_int seen_at_entry; /* `forked` when the late entrant got in */

static void pause_ms(int ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

static void wait_for(atomic_int *flag) {
  for (int i = 0; i < 5000 && !atomic_load(flag); i++) /* 5 s at most */
    pause_ms(1);
  cr_assert(atomic_load(flag), "the awaited step never happened");
}

static void *forker(void *arg) {
  (void)arg;
  mh_fdgate_fork_prepare();
  atomic_store(&forked, 1);
  while (!atomic_load(&release_fork))
    pause_ms(1);
  atomic_store(&forked, 2);
  mh_fdgate_fork_parent();
  return NULL;
}

static void *entrant(void *arg) {
  (void)arg;
  mh_fdgate(1);
  atomic_store(&seen_at_entry, atomic_load(&forked));
  atomic_store(&entered, 1);
  mh_fdgate(0);
  return NULL;
}

static void reset(void) {
  atomic_store(&forked, 0);
  atomic_store(&entered, 0);
  atomic_store(&release_fork, 0);
  atomic_store(&seen_at_entry, -1);
}

Test(fdgate, a_fork_waits_for_the_thread_inside_and_holds_new_entries_off) {
  reset();
  mh_fdgate(1);
  mh_fdgate(1); /* nested: one hold */
  pthread_t f, n;
  cr_assert_eq(pthread_create(&f, NULL, forker, NULL), 0);
  pause_ms(50);
  cr_assert_eq(atomic_load(&forked), 0, "the fork went ahead while a thread was inside");
  cr_assert_eq(pthread_create(&n, NULL, entrant, NULL), 0);
  pause_ms(50);
  cr_assert_eq(atomic_load(&entered), 0, "a new entry went ahead of the waiting fork");
  mh_fdgate(0);
  pause_ms(20);
  cr_assert_eq(atomic_load(&forked), 0, "the fork went ahead while the outer hold remained");
  mh_fdgate(0);
  wait_for(&forked);
  pause_ms(20);
  cr_assert_eq(atomic_load(&entered), 0, "an entry went in while the fork held the gate");
  atomic_store(&release_fork, 1);
  wait_for(&entered);
  cr_assert_eq(atomic_load(&seen_at_entry), 2, "the entrant got in before the fork let go");
  pthread_join(f, NULL);
  pthread_join(n, NULL);
}

Test(fdgate, a_fork_from_inside_the_gate_does_not_wait_for_itself) {
  mh_fdgate(1);
  mh_fdgate_fork_prepare(); /* would deadlock if it waited */
  mh_fdgate_fork_parent();
  mh_fdgate(0);
  /* and the gate works afterwards: a fork from outside takes and leaves it */
  mh_fdgate_fork_prepare();
  mh_fdgate_fork_parent();
  mh_fdgate(1);
  mh_fdgate(0);
}

Test(fdgate, leaving_more_often_than_entering_is_harmless) {
  mh_fdgate(0);
  mh_fdgate_fork_prepare();
  mh_fdgate_fork_parent();
}

Test(fdgate, the_child_of_a_fork_finds_the_gate_open) {
  /* glibc's unlock knows a writer by its thread id, which the child's thread does not share:
   * the child must start with a fresh gate, or its first entry waits forever */
  mh_fdgate_fork_prepare();
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    alarm(5); /* a gate left shut ends the child by SIGALRM */
    mh_fdgate_fork_child();
    mh_fdgate(1);
    mh_fdgate(0);
    mh_fdgate_fork_prepare();
    mh_fdgate_fork_parent();
    _exit(0);
  }
  mh_fdgate_fork_parent();
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}
