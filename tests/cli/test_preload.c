/* cli/preload.c: which preload library `mhttp run` uses, the LD_PRELOAD it composes (the caller's entries kept) and the shell-style exit status. */
#include <criterion/criterion.h>
#include <signal.h>

#include "preload.h"

Test(preload, compose) {
  char b[128];
  cr_assert_eq(cli_preload_compose("/l/libmhttp.so", NULL, b, sizeof b), 0);
  cr_expect_str_eq(b, "/l/libmhttp.so");
  cr_assert_eq(cli_preload_compose("/l/libmhttp.so", "", b, sizeof b), 0);
  cr_expect_str_eq(b, "/l/libmhttp.so");
  cr_assert_eq(cli_preload_compose("/l/libmhttp.so", "libasan.so.8 /x/y.so", b, sizeof b), 0);
  cr_expect_str_eq(b, "/l/libmhttp.so libasan.so.8 /x/y.so");
  cr_assert_eq(cli_preload_compose("/l/libmhttp.so", "/a.so:/b.so", b, sizeof b), 0);
  cr_expect_str_eq(b, "/l/libmhttp.so /a.so:/b.so");
  /* already first: kept as it was */
  cr_assert_eq(cli_preload_compose("/l/libmhttp.so", "/l/libmhttp.so:/b.so", b, sizeof b), 0);
  cr_expect_str_eq(b, "/l/libmhttp.so:/b.so");
  /* a longer name that begins like ours is another library */
  cr_assert_eq(cli_preload_compose("/l/libmhttp.so", "/l/libmhttp.so.0", b, sizeof b), 0);
  cr_expect_str_eq(b, "/l/libmhttp.so /l/libmhttp.so.0");
  char tiny[16];
  cr_expect_eq(cli_preload_compose("/l/libmhttp.so", "/other.so", tiny, sizeof tiny), -1);
}

Test(preload, path) {
  char b[128], e[128];
  cr_assert_eq(cli_preload_path("/t/shim.so", "/usr/bin", "/b/cli", "/b/shim/libmhttp.so",
                                "../lib/libmhttp/libmhttp.so", b, sizeof b, e, sizeof e),
               0);
  cr_expect_str_eq(b, "/t/shim.so");
  cr_expect_eq(cli_preload_path("shim.so", "/usr/bin", "/b/cli", "/b/shim/libmhttp.so", "x", b, sizeof b, e, sizeof e),
               -1);
  cr_expect_str_eq(e, "MHTTP_PRELOAD must be an absolute path, not 'shim.so'");
  cr_assert_eq(cli_preload_path("", "/b/cli", "/b/cli", "/b/shim/libmhttp.so", "../lib/libmhttp/libmhttp.so", b,
                                sizeof b, e, sizeof e),
               0);
  cr_expect_str_eq(b, "/b/shim/libmhttp.so");
  cr_assert_eq(cli_preload_path(NULL, "/usr/bin", "/b/cli", "/b/shim/libmhttp.so",
                                "../lib/x86_64-linux-gnu/libmhttp/libmhttp.so", b, sizeof b, e, sizeof e),
               0);
  cr_expect_str_eq(b, "/usr/bin/../lib/x86_64-linux-gnu/libmhttp/libmhttp.so");
  cr_expect_eq(cli_preload_path(NULL, NULL, "/b/cli", "/b/shim/libmhttp.so", "x", b, sizeof b, e, sizeof e), -1);
  char tiny[8];
  cr_expect_eq(cli_preload_path(NULL, "/usr/bin", "/b", "/b/s", "../lib/x.so", tiny, sizeof tiny, e, sizeof e), -1);
}

Test(preload, wait_code_like_a_shell) {
  cr_expect_eq(cli_wait_code(0), 0);
  cr_expect_eq(cli_wait_code(3 << 8), 3);
  cr_expect_eq(cli_wait_code(SIGKILL), 128 + 9);
  cr_expect_eq(cli_wait_code(SIGINT | 0x80), 130); /* killed with a core dump */
}
