/* The fork gate: code that holds a descriptor a forked child could not know to close (made and not yet announced, forgotten and not yet closed, a store's file under its lock) runs inside it, and an embedding that forks holds it closed across fork(). */
#ifndef MH_FDGATE_H
#define MH_FDGATE_H

/* Enters (open = 1) or leaves (open = 0) the gate: a shared hold, nested per thread, cheap
 * when nobody forks. Between the two the caller makes, marks, forgets or closes descriptors
 * and never forks, waits for a lock a forking thread may hold, or blocks on the network. */
void mh_fdgate(int open);
/* pthread_atfork's three handlers: a fork waits for every thread inside the gate to leave it,
 * new entries wait for the fork, and the child starts with the gate open. Registered by the
 * shim; the API library's children exec. */
void mh_fdgate_fork_prepare(void);
void mh_fdgate_fork_parent(void);
void mh_fdgate_fork_child(void);

#endif
