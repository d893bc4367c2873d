/* Fuzz target: the config file parser (mh_config_parse_text) and single settings (mh_config_set) of multihttp/config/mh_config.c. */
#include <string.h>

#include "fuzz.h"
#include "mh_config.h"

/* A fixed-size text field is NUL-terminated inside its array. */
#define FIELD_OK(f) (memchr((f), '\0', sizeof(f)) != NULL)

/* Whatever was accepted stays within the documented bounds. */
static void fuzz__check_cfg(const struct mh_config *c) {
  FUZZ_CHECK(c->disabled == 0 || c->disabled == 1);
  FUZZ_CHECK(c->log_level >= 0 && c->log_level <= 3);
  FUZZ_CHECK(c->split == 0 || c->split == 1);
  FUZZ_CHECK(c->rwnd_k == 0 || (c->rwnd_k >= 1 && c->rwnd_k <= 16));
  FUZZ_CHECK(c->init_chunk >= 1024 && c->init_chunk <= 64ULL << 20);
  FUZZ_CHECK(c->window >= 1ULL << 20 && c->window <= 4ULL << 30);
  FUZZ_CHECK(c->max_conns >= 1 && c->max_conns <= 64);
  FUZZ_CHECK(c->path_conns >= 1 && c->path_conns <= 8);
  FUZZ_CHECK(c->pol.metered_gain >= 0 && c->pol.metered_gain < 1);
  FUZZ_CHECK(c->pol.split_gain >= 0 && c->pol.split_gain < 1);
  FUZZ_CHECK(FIELD_OK(c->log_file) && FIELD_OK(c->ifaces) && FIELD_OK(c->stats) && FIELD_OK(c->metered) &&
             FIELD_OK(c->intent_size) && FIELD_OK(c->intent_category) && FIELD_OK(c->metrics) &&
             FIELD_OK(c->metrics_store) && FIELD_OK(c->pol.single_if));
  FUZZ_CHECK(c->ndns <= sizeof c->dns / sizeof c->dns[0]);
  for (unsigned k = 0; k < c->ndns; k++) {
    FUZZ_CHECK(FIELD_OK(c->dns[k].iface) && FIELD_OK(c->dns[k].servers) && c->dns[k].iface[0]);
    FUZZ_CHECK(mh_config_dns(c, c->dns[k].iface) != NULL);
  }
  FUZZ_CHECK(!c->metrics_store[0] || !strcmp(c->metrics_store, "off") || c->metrics_store[0] == '/');
}

/* An error is one line of text naming its source, inside the caller's buffer. */
static void fuzz__check_err(int rc, const char *err, size_t errlen, const char *src) {
  FUZZ_CHECK(rc == 0 || rc == -1 || rc == 1);
  if (rc != -1 || errlen == 0)
    return;
  FUZZ_CHECK(memchr(err, '\0', errlen) != NULL);
  FUZZ_CHECK(!strncmp(err, src, strnlen(err, errlen)) || !strncmp(err, src, strlen(src)));
  FUZZ_CHECK(strlen(err) > 0 || errlen == 1);
}

/* Input: one byte choosing the error buffer's size, one choosing the mode, then the text.
 * Mode even: a whole config file. Mode odd: "key\0value" given to mh_config_set. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  size_t errlen = data[0] == 0 ? MH_CONFIG_ERR_MAX : data[0]; /* exact size: overruns trip ASan */
  char *err = malloc(errlen);
  memset(err, 'x', errlen);
  static struct mh_config cfg;
  mh_config_defaults(&cfg);
  const char *text = (const char *)data + 2;
  size_t len = size - 2;
  int rc;
  if (data[1] & 1) {
    char *kv = malloc(len + 2); /* key and value NUL-terminated; a missing NUL ends the value */
    memcpy(kv, text, len);
    kv[len] = kv[len + 1] = '\0';
    const char *key = kv, *value = kv + strlen(kv) + 1;
    if (value > kv + len)
      value = kv + len + 1;
    rc = mh_config_set(&cfg, key, value, "environment", err, errlen);
    fuzz__check_err(rc, err, errlen, "environment");
    free(kv);
  } else {
    rc = mh_config_parse_text(&cfg, text, len, "fuzz.conf", err, errlen);
    FUZZ_CHECK(rc == 0 || rc == -1);
    fuzz__check_err(rc, err, errlen, "fuzz.conf");
  }
  fuzz__check_cfg(&cfg);
  free(err);
  return 0;
}
