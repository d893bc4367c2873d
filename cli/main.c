/* The mhttp command's entry: parses the arguments and dispatches to a download, `run` or `ifaces`. */
#include <stdio.h>
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
  if (argc > 1 && !strcmp(argv[1], "daemon"))  /* aria2c's command line, not mhttp's */
    return dmn_main(argc - 1, argv + 1);
  static struct cli_opts o;
  char err[CLI_ERR_MAX];
  int rc = cli_opts_parse(argc, argv, &o, err, sizeof err);
  if (rc) {
    fprintf(stderr, "mhttp: %s\n", err);
    if (rc == 2)
      fprintf(stderr, "mhttp: try 'mhttp --help' for more information\n");
    return rc;
  }
  switch (o.mode) {
  case CLI_HELP: fputs(cli_opts_help(), stdout); return 0;
  case CLI_VERSION: printf("mhttp %s (libmhttp %s)\n", MHTTP_CLI_VERSION, mhttp_version()); return 0;
  case CLI_RUN: return cli_run(o.run_argv);
  case CLI_IFACES: return cli_ifaces();
  case CLI_GET: break;
  }
  return cli_download(&o);
}
