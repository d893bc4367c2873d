/* cli/statsjson.c and cli/ifaces_fmt.c: the exact JSON of a stats snapshot and the text of one interface. */
#include <criterion/criterion.h>
#include <string.h>

#include "ifaces.h"
#include "statsjson.h"

Test(format, stats_json) {
  mhttp_xfer_stats x = {.size = sizeof x, .http_status = 206, .total = 4096, .done = 1024, .fetched = 2048,
                        .resumed = 512, .rate = 1000.4, .elapsed = 1.25, .paths = 2, .split = 1};
  mhttp_path_stats p[2] = {{.iface = "wifi0", .replica = "10.0.0.1", .up = 1, .bytes = 700, .rate = 10,
                            .srtt_us = 1500, .in_flight = 2},
                           {.iface = "od\"d\\\n", .replica = "fd00::1", .bytes = 1, .mirror = 2}};
  char buf[1024];
  size_t n = cli_stats_json("progress", &x, p, 2, buf, sizeof buf);
  cr_expect_eq(n, strlen(buf));
  cr_expect_str_eq(buf,
                   "{\"event\":\"progress\",\"http_status\":206,\"total\":4096,\"done\":1024,\"fetched\":2048,"
                   "\"resumed\":512,\"rate\":1000,\"elapsed\":1.250,\"split\":1,\"paths\":["
                   "{\"iface\":\"wifi0\",\"replica\":\"10.0.0.1\",\"mirror\":0,\"up\":1,\"bytes\":700,\"rate\":10,"
                   "\"srtt_us\":1500,\"in_flight\":2},"
                   "{\"iface\":\"od\\\"d\\\\\\u000a\",\"replica\":\"fd00::1\",\"mirror\":2,\"up\":0,\"bytes\":1,\"rate\":0,"
                   "\"srtt_us\":0,\"in_flight\":0}]}");
  x.total = UINT64_MAX;
  cli_stats_json("start", &x, NULL, 0, buf, sizeof buf);
  cr_expect(strstr(buf, "\"total\":null,"));
  cr_expect(strstr(buf, "\"paths\":[]}"));
  char small[16];
  cr_expect_gt(cli_stats_json("start", &x, NULL, 0, small, sizeof small), sizeof small);
  cr_expect_eq(strlen(small), sizeof small - 1);
}

Test(format, one_interface) {
  struct cli_iface_row r = {.name = "wifi0", .naddr = 2, .dns = "10.201.1.1", .dns_src = "environment"};
  strcpy(r.addr[0].addr, "10.201.1.2");
  r.addr[0].has_metrics = 1;
  r.addr[0].srtt_min_us = 10400;
  r.addr[0].srtt_med_us = 11000;
  r.addr[0].max_rate = 2516582.4;
  strcpy(r.addr[1].addr, "fd00:201::2");
  char buf[512];
  cli_ifaces_format(&r, buf, sizeof buf);
  cr_expect_str_eq(buf, "wifi0\n"
                        "  address  10.201.1.2       srtt min 10.4 ms, median 11.0 ms, max 2.4 MiB/s\n"
                        "  address  fd00:201::2      no shared metrics\n"
                        "  dns      10.201.1.1 (environment)\n");
  r.dns[0] = 0;
  r.naddr = 0;
  cli_ifaces_format(&r, buf, sizeof buf);
  cr_expect_str_eq(buf, "wifi0\n  dns      none (no per-interface resolution)\n");
}
