/* cli/statsjson.c and cli/ifaces_fmt.c: the exact JSON of a stats snapshot (with the causes of dropped paths) and the text of one interface. */
#include <criterion/criterion.h>
#include <string.h>

#include "ifaces.h"
#include "statsjson.h"

Test(format, stats_json) {
  mhttp_xfer_stats x = {.size = sizeof x,
                        .http_status = 206,
                        .total = 4096,
                        .done = 1024,
                        .fetched = 2048,
                        .resumed = 512,
                        .rate = 1000.4,
                        .elapsed = 1.25,
                        .paths = 2,
                        .split = 1};
  mhttp_path_stats p[2] = {
      {.iface = "wifi0", .replica = "10.0.0.1", .up = 1, .bytes = 700, .rate = 10, .srtt_us = 1500, .in_flight = 2},
      {.iface = "od\"d\\\n", .replica = "fd00::1", .bytes = 1, .mirror = 2}};
  char buf[1024];
  struct cli_stats_doc d = {"progress", NULL, &x, p, 2, NULL, 0};
  size_t n = cli_stats_json(&d, buf, sizeof buf);
  cr_expect_eq(n, strlen(buf));
  cr_expect_str_eq(
      buf, "{\"event\":\"progress\",\"http_status\":206,\"total\":4096,\"done\":1024,\"fetched\":2048,"
           "\"resumed\":512,\"rate\":1000,\"elapsed\":1.250,\"split\":1,\"paths\":["
           "{\"iface\":\"wifi0\",\"replica\":\"10.0.0.1\",\"mirror\":0,\"up\":1,\"bytes\":700,\"rate\":10,"
           "\"srtt_us\":1500,\"in_flight\":2},"
           "{\"iface\":\"od\\\"d\\\\\\u000a\",\"replica\":\"fd00::1\",\"mirror\":2,\"up\":0,\"bytes\":1,\"rate\":0,"
           "\"srtt_us\":0,\"in_flight\":0}],\"dropped\":[]}");
  x.total = UINT64_MAX;
  d = (struct cli_stats_doc){"start", NULL, &x, NULL, 0, NULL, 0};
  cli_stats_json(&d, buf, sizeof buf);
  cr_expect(strstr(buf, "\"total\":null,"));
  cr_expect(strstr(buf, "\"paths\":[],\"dropped\":[]}"));
  char small[16];
  cr_expect_gt(cli_stats_json(&d, small, sizeof small), sizeof small);
  cr_expect_eq(strlen(small), sizeof small - 1);
}

/* A path-down event names its cause; every JSON object lists the causes so far (--stats too). */
Test(format, stats_json_causes) {
  mhttp_xfer_stats x = {.size = sizeof x, .http_status = 200, .total = 10, .done = 10, .fetched = 10};
  struct cli_cause c[2] = {{.mirror = 1, .exit = 6, .message = "could not resolve host: m.test"},
                           {.iface = "wifi0",
                            .replica = "10.0.0.2",
                            .mirror = 2,
                            .exit = 8,
                            .message = "mirror at 10.0.0.2 answered otherwise: HTTP 404"}};
  struct cli_stats_doc d = {"path-down", &c[1], &x, NULL, 0, c, 2};
  char buf[1024];
  cli_stats_json(&d, buf, sizeof buf);
  cr_expect_str_eq(buf,
                   "{\"event\":\"path-down\",\"cause\":{\"iface\":\"wifi0\",\"replica\":\"10.0.0.2\",\"mirror\":2,"
                   "\"exit\":8,\"message\":\"mirror at 10.0.0.2 answered otherwise: HTTP 404\"},\"http_status\":200,"
                   "\"total\":10,\"done\":10,\"fetched\":10,\"resumed\":0,\"rate\":0,\"elapsed\":0.000,\"split\":0,"
                   "\"paths\":[],\"dropped\":[{\"iface\":\"\",\"replica\":\"\",\"mirror\":1,\"exit\":6,"
                   "\"message\":\"could not resolve host: m.test\"},{\"iface\":\"wifi0\",\"replica\":\"10.0.0.2\","
                   "\"mirror\":2,\"exit\":8,\"message\":\"mirror at 10.0.0.2 answered otherwise: HTTP 404\"}]}");
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
