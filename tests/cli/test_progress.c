/* cli/progress.c: the exact lines for given snapshots and widths, the redraw frame's escapes, and the 5-per-second throttle. */
#include <criterion/criterion.h>
#include <string.h>

#include "progress.h"

static const mhttp_xfer_stats half = {
    .size = sizeof(mhttp_xfer_stats), .http_status = 200, .total = 10485760, .done = 4718592, .rate = 1048576};
static const mhttp_path_stats two[2] = {
    {.size = sizeof(mhttp_path_stats),
     .iface = "wifi0",
     .replica = "10.201.1.10",
     .up = 1,
     .bytes = 3145728,
     .rate = 409600,
     .srtt_us = 12345},
    {.size = sizeof(mhttp_path_stats),
     .iface = "lte0",
     .replica = "fd00:202::10",
     .up = 0,
     .bytes = 1048576,
     .rate = 0,
     .srtt_us = 0},
};

Test(progress, bar_and_paths_at_80) {
  char buf[2048];
  cr_assert_eq(cli_progress_lines(&half, two, 2, 80, buf, sizeof buf), 3);
  cr_expect_str_eq(buf, " 45% [================>                   ] 4.5 MiB/10.0 MiB 1.0 MiB/s eta 0:06\n"
                        "  wifi0    10.201.1.10      400.0 KiB/s  srtt 12.3 ms    75%\n"
                        "  lte0     fd00:202::10           0 B/s  srtt -          25%  (down)\n");
}

/* A path is an (interface, server): a mirror's line says which mirror; one that never resolved has
 * no address. */
Test(progress, mirror_paths) {
  const mhttp_path_stats p[3] = {
      {.iface = "wifi0", .replica = "10.210.1.10", .up = 1, .bytes = 1, .rate = 1024},
      {.iface = "wifi0", .replica = "10.210.2.10", .up = 1, .bytes = 3, .rate = 3072, .mirror = 1},
      {.iface = "lte0", .replica = "", .bytes = 0, .mirror = 12},
  };
  char buf[2048];
  cr_assert_eq(cli_progress_lines(&half, p, 3, 80, buf, sizeof buf), 4);
  cr_expect_str_eq(strchr(buf, '\n') + 1,
                   "  wifi0    10.210.1.10               1.0 KiB/s  srtt -          25%\n"
                   "  wifi0    10.210.2.10 (mirror 1)    3.0 KiB/s  srtt -          75%\n"
                   "  lte0     - (mirror 12)                 0 B/s  srtt -           0%  (down)\n");
}

Test(progress, narrow_terminal_drops_the_bar_then_cuts) {
  char buf[2048];
  cr_assert_eq(cli_progress_lines(&half, two, 1, 41, buf, sizeof buf), 2);
  cr_expect_str_eq(buf, " 45% 4.5 MiB/10.0 MiB 1.0 MiB/s eta 0:06\n"
                        "  wifi0    10.201.1.10      400.0 KiB/s \n");
  cr_assert_eq(cli_progress_lines(&half, two, 1, 40, buf, sizeof buf), 2);
  cr_expect_str_eq(buf, " 45% 4.5 MiB/10.0 MiB 1.0 MiB/s eta 0:0\n"
                        "  wifi0    10.201.1.10      400.0 KiB/s\n");
  cr_assert_eq(cli_progress_lines(&half, NULL, 0, 20, buf, sizeof buf), 1);
  cr_expect_str_eq(buf, " 45% 4.5 MiB/10.0 M\n");
}

Test(progress, unknown_total_finished_and_no_rate) {
  char buf[512];
  mhttp_xfer_stats x = {.total = UINT64_MAX, .done = 1536, .rate = 512};
  cli_progress_lines(&x, NULL, 0, 80, buf, sizeof buf);
  cr_expect_str_eq(buf, "  ?% 1.5 KiB 512 B/s\n");
  x = (mhttp_xfer_stats){.total = 2147483648, .done = 2147483648, .rate = 0};
  cli_progress_lines(&x, NULL, 0, 50, buf, sizeof buf);
  cr_expect_str_eq(buf, "100% [==========] 2.0 GiB/2.0 GiB 0 B/s eta --:--\n");
  x = (mhttp_xfer_stats){.total = 0, .done = 0};
  cli_progress_lines(&x, NULL, 0, 30, buf, sizeof buf);
  cr_expect_str_eq(buf, "100% 0 B/0 B 0 B/s eta --:--\n");
  x = (mhttp_xfer_stats){.total = 1u << 30, .done = 0, .rate = 100000};
  cli_progress_lines(&x, NULL, 0, 60, buf, sizeof buf);
  cr_expect_str_eq(buf, "  0% [>                ] 0 B/1.0 GiB 97.7 KiB/s eta 2:58:57\n");
}

Test(progress, too_small_a_buffer) {
  char buf[8];
  cr_expect_eq(cli_progress_lines(&half, two, 2, 80, buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "");
}

Test(progress, frames) {
  char buf[256];
  size_t n = cli_progress_frame(0, "a\nbb\n", buf, sizeof buf);
  cr_expect_str_eq(buf, "a\033[K\nbb\033[K\n");
  cr_expect_eq(n, strlen(buf));
  cli_progress_frame(2, "c\n", buf, sizeof buf);
  cr_expect_str_eq(buf, "\r\033[2Ac\033[K\n\033[J");
  cli_progress_frame(3, "", buf, sizeof buf);
  cr_expect_str_eq(buf, "\r\033[3A\033[J");
  cli_progress_frame(1, "x\ny\n", buf, sizeof buf);
  cr_expect_str_eq(buf, "\r\033[1Ax\033[K\ny\033[K\n");
}

Test(progress, at_most_five_a_second) {
  cr_expect(cli_progress_due(1, 0, 0));
  cr_expect_not(cli_progress_due(0, 1000, 1199));
  cr_expect(cli_progress_due(0, 1000, 1200));
}

Test(progress, bytes) {
  char b[16];
  double v[] = {0, 1023, 1024, 1536, 10485760, 1073741824.0 * 3.5, 1099511627776.0 * 2048};
  const char *w[] = {"0 B", "1023 B", "1.0 KiB", "1.5 KiB", "10.0 MiB", "3.5 GiB", "2048.0 TiB"};
  for (int i = 0; i < 7; i++) {
    cli_fmt_bytes(v[i], b, sizeof b);
    cr_expect_str_eq(b, w[i]);
  }
}
