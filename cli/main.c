/* The mhttp command's entry: parses the arguments and dispatches to the downloads, `run`, `ifaces` or `daemon` (also when called as `mhttpd`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "download.h"
#include "ifaces.h"
#include "mhttp.h"
#include "opts.h"
#include "run.h"

#ifndef MHTTP_CLI_VERSION
#error "MHTTP_CLI_VERSION comes from cli/CMakeLists.txt"
#endif

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "daemon")) /* aria2c's command line, not mhttp's */
    return dmn_main(argc - 1, argv + 1);
  const char *base = strrchr(argv[0], '/');
  if (!strcmp(base ? base + 1 : argv[0], "mhttpd")) /* the daemon's own name (a link to mhttp) */
    return dmn_main(argc, argv);
  static struct cli_opts o;
  char err[CLI_ERR_MAX], ifaces[1024];
  int rc = cli_opts_parse(argc, argv, &o, err, sizeof err);
  if (rc) {
    fprintf(stderr, "mhttp: %s\n", err);
    if (rc == 2)
      fprintf(stderr, "mhttp: try 'mhttp --help' for more information\n");
    return rc;
  }
  /* -i before a sub-command: the interfaces it reads from the configuration */
  if ((o.mode == CLI_RUN || o.mode == CLI_IFACES) && cli_opts_ifaces(&o, ifaces, sizeof ifaces) == 0)
    setenv("MHTTP_IFACES", ifaces, 1);
  switch (o.mode) {
  case CLI_HELP: fputs(cli_opts_help(), stdout); return 0;
  case CLI_VERSION: printf("mhttp %s (libmhttp %s)\n", MHTTP_CLI_VERSION, mhttp_version()); return 0;
  case CLI_RUN: return cli_run(o.run_argv);
  case CLI_IFACES: return cli_ifaces();
  case CLI_GET: break;
  }
  return cli_download(&o);
}
