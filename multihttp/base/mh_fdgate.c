/* The fork gate (mh_fdgate.h): one process-wide writer-preferring rwlock, entered shared by the threads that make and close engine descriptors and exclusively by fork(). */
#include "mh_fdgate.h"

#include <pthread.h>

/* Writer preference: a fork that waits holds new entries off, so a busy loop thread that
 * leaves and re-enters the gate cannot starve it. Non-recursive, hence the depth count. */
static pthread_rwlock_t mh__gate = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static __thread unsigned mh__depth __attribute__((tls_model("initial-exec")));
/* Set by the thread that holds the gate for a fork, cleared by the same thread after it;
 * only that thread reads it while it holds the gate exclusively. */
static int mh__held;

void mh_fdgate(int open) {
  if (open) {
    if (mh__depth++ == 0)
      pthread_rwlock_rdlock(&mh__gate);
  } else if (mh__depth && --mh__depth == 0) {
    pthread_rwlock_unlock(&mh__gate);
  }
}

void mh_fdgate_fork_prepare(void) {
  if (mh__depth)
    return; /* forking from inside the gate (never done here): do not wait for ourselves */
  pthread_rwlock_wrlock(&mh__gate);
  mh__held = 1;
}

void mh_fdgate_fork_parent(void) {
  if (mh__held) {
    mh__held = 0;
    pthread_rwlock_unlock(&mh__gate);
  }
}

/* A fresh gate: glibc's unlock tells a writer by its thread id, which the child's thread no
 * longer has, and no thread of the parent that waited at the gate exists here. */
void mh_fdgate_fork_child(void) {
  mh__held = 0;
  mh__depth = 0;
  mh__gate = (pthread_rwlock_t)PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
}
