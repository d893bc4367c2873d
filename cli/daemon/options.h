/* aria2's option names as the daemon takes them: from the command line (aria2c's RPC-mode options), a --conf-path file (name=value lines) and RPC calls; each validated by its kind. Pure. */
#ifndef DMN_OPTIONS_H
#define DMN_OPTIONS_H
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* How a name is handled: DMN_OPT_USED changes what the daemon does; DMN_OPT_KEPT is stored and
 * shown (getOption) but has no effect yet (aria2 tuning the engine makes its own, such as
 * split); unknown names are DMN_OPT_UNKNOWN. */
enum dmn_opt_use { DMN_OPT_UNKNOWN, DMN_OPT_USED, DMN_OPT_KEPT };

/* What name is to the daemon. */
enum dmn_opt_use dmn_opt_use(const char *name);
/* 0 when value is valid for the known option name, -1 when not (aria2's "We encountered a
 * problem while processing the option"); unknown names are valid (aria2 ignores them). */
int dmn_opt_valid(const char *name, const char *value);
/* A boolean option's value: 1 for "true", else 0. */
int dmn_opt_true(const json_t *opts, const char *name);

/* The global options' defaults (a new object; dir is the working directory). */
json_t *dmn_opt_defaults(void);

/* Parses aria2c's command line (argv[0] is the command name) into opts (name -> string) and
 * uris (the URIs given). A name the daemon does not know is written to warn and skipped; an
 * invalid value of a known one is an error. Returns 0, 1 for --help (-h), or -1 with err. */
int dmn_opt_parse_args(int argc, char **argv, json_t *opts, json_t *uris, FILE *warn, char *err, size_t errlen);
/* Reads an aria2 configuration file (name=value lines, # comments) into opts, with the same
 * rules. Returns 0, or -1 with err. */
int dmn_opt_parse_conf(const char *path, json_t *opts, FILE *warn, char *err, size_t errlen);
/* The file named by --conf-path in argv, if any (NULL when none). */
const char *dmn_opt_conf_path(int argc, char **argv);

/* The daemon's --help text. */
const char *dmn_opt_help(void);

#endif
