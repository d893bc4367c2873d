/* A table standing in for the environment, for tests of mh_config_apply_env. */
#ifndef TESTS_MULTIHTTP_FAKEENV_H
#define TESTS_MULTIHTTP_FAKEENV_H
#include <string.h>

static const char *env_tab[8][2];

static const char *fake_getenv(const char *name) {
  for (int i = 0; i < 8 && env_tab[i][0]; i++)
    if (!strcmp(env_tab[i][0], name))
      return env_tab[i][1];
  return NULL;
}

/* Sets (or replaces) one variable of the table. */
static inline void set_env(const char *k, const char *v) {
  for (int i = 0; i < 8; i++)
    if (!env_tab[i][0] || !strcmp(env_tab[i][0], k)) {
      env_tab[i][0] = k;
      env_tab[i][1] = v;
      return;
    }
}

#endif
