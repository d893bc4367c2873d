/* `mhttp daemon`: aria2's RPC mode on the libmhttp API (README.md in this folder). */
#ifndef DMN_DAEMON_H
#define DMN_DAEMON_H

/* Runs the daemon with aria2c's command line (argv[0] is "daemon" or "mhttpd"); returns the exit status:
 * 0 after shutdown, 1 when it could not start, 2 for a bad option. */
int dmn_main(int argc, char **argv);

#endif
