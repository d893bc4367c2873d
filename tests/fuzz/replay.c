/* Corpus replay without libFuzzer: feeds every file named (or found in a named folder) to LLVMFuzzerTestOneInput once. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Runs one file; returns 0, or -1 when it cannot be read. */
static int replay__file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf)
    return -1;
  /* an exact-size copy, so reading past the input trips ASan as under libFuzzer */
  uint8_t *exact = malloc(len ? len : 1);
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int replay__name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs every regular file of a folder, in name order; returns the count or -1. */
static int replay__dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  char *names[4096];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 4096)
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, replay__name_cmp);
  int ran = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && replay__file(path) == 0)
      ran++;
    free(names[i]);
  }
  return ran;
}

int main(int argc, char **argv) {
  int total = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    int r = stat(argv[i], &st) < 0 ? -1 : S_ISDIR(st.st_mode) ? replay__dir(argv[i]) : replay__file(argv[i]) == 0;
    if (r < 0) {
      fprintf(stderr, "replay: cannot read %s\n", argv[i]);
      return 2;
    }
    total += r;
  }
  if (total == 0) {
    fprintf(stderr, "replay: no input files\n");
    return 2;
  }
  printf("replay: %d input(s) passed\n", total);
  return 0;
}
