/* `mhttp run [--] CMD ...`: runs CMD with the preload library in LD_PRELOAD and returns its exit status. */
#ifndef CLI_RUN_H
#define CLI_RUN_H

/* Runs argv[0] (searched in PATH) with argv; returns its exit status as a shell would
 * (128 + signal when killed; 127 not found, 126 not executable), or 2 when the preload
 * library cannot be found (a message on stderr). */
int cli_run(char **argv);

#endif
