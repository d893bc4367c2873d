/* Shared bits of the libFuzzer targets: the check macro and the entry point's prototype. */
#ifndef MHTTP_FUZZ_H
#define MHTTP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* An invariant of a target: abort (libFuzzer keeps the input as a crash) with the condition's
 * text. Not assert(): it must hold in every build, NDEBUG or not. */
#define FUZZ_CHECK(c)                                                             \
  do {                                                                            \
    if (!(c)) {                                                                   \
      fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
      abort();                                                                    \
    }                                                                             \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
