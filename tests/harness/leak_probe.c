/* Deliberately leaks: CTest must report this test as failed, or leak detection is off (WILL_FAIL inverts it). */
#include <criterion/criterion.h>
#include <stdlib.h>

static void *volatile sink;

Test(harness, leak_is_reported) {
  sink = malloc(123);
  sink = NULL; /* the only pointer is gone: a definite leak */
  cr_assert(1);
}
