/* The capped byte buffer: memory only as large as the pending bytes need (doubling up to the ceiling), bytes kept in order across growth and consumption, the ceiling enforced. */
#include <criterion/criterion.h>
#include <string.h>

#include "mh_buf.h"

#define CAP (256 * 1024)

Test(buf, first_append_allocates_what_it_needs_not_the_ceiling) {
  struct mh_buf b;
  mh_buf_init(&b, CAP);
  cr_assert_null(b.data);
  cr_assert_eq(mh_buf_append(&b, "GET / HTTP/1.1\r\n\r\n", 18), 0);
  cr_assert_eq(b.alloc, (size_t)MH_BUF_MIN_ALLOC);
  cr_assert_eq(memcmp(mh_buf_head(&b), "GET / HTTP/1.1\r\n\r\n", 18), 0);
  mh_buf_free(&b);
  cr_assert_eq(b.alloc, 0u);
}

Test(buf, grows_by_doubling_up_to_the_ceiling_and_keeps_the_bytes) {
  static char in[CAP], out[CAP];
  for (size_t i = 0; i < sizeof in; i++)
    in[i] = (char)(i * 7 + i / 251);
  struct mh_buf b;
  mh_buf_init(&b, CAP);
  size_t w = 0, r = 0;
  /* appends of 3000 bytes, consuming 1000 after each: the pending run slides and grows */
  while (w + 3000 <= sizeof in) {
    cr_assert_eq(mh_buf_append(&b, in + w, 3000), 0);
    w += 3000;
    memcpy(out + r, mh_buf_head(&b), 1000);
    mh_buf_consume(&b, 1000);
    r += 1000;
    cr_assert_leq(b.alloc, (size_t)CAP);
    cr_assert_geq(b.alloc, b.len);
  }
  memcpy(out + r, mh_buf_head(&b), b.len);
  r += b.len;
  cr_assert_eq(r, w);
  cr_assert_eq(memcmp(in, out, w), 0);
  cr_assert_eq(b.alloc, (size_t)CAP); /* 4 KiB doubled to 256 KiB, never past it */
  mh_buf_free(&b);
}

Test(buf, ceiling_is_enforced_and_nothing_partial_is_appended) {
  static char in[CAP];
  struct mh_buf b;
  mh_buf_init(&b, CAP);
  cr_assert_eq(mh_buf_append(&b, in, CAP - 10), 0);
  cr_assert_eq(mh_buf_append(&b, in, 11), -ENOBUFS);
  cr_assert_eq(b.len, (size_t)CAP - 10);
  cr_assert_eq(mh_buf_append(&b, in, 10), 0);
  mh_buf_consume(&b, CAP);
  cr_assert_eq(b.len, 0u);
  mh_buf_trim(&b);
  cr_assert_null(b.data);
}

Test(buf, empty_append_allocates_nothing) {
  struct mh_buf b;
  mh_buf_init(&b, CAP);
  cr_assert_eq(mh_buf_append(&b, "", 0), 0);
  cr_assert_null(b.data);
}
