/* The daemon's log lines on stderr: "mhttp daemon: MSG" on a terminal or in a file; "<N>MSG" when stderr is the journal (sd-daemon's syslog priority prefix; no name and no time, which the journal adds itself). */
#ifndef DMN_LOG_H
#define DMN_LOG_H
#include <stddef.h>
#include <syslog.h> /* LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO: the priorities dmn_log takes */

/* 1 when journal_stream (the value of JOURNAL_STREAM, "DEV:INO" in decimal, which systemd sets
 * for a unit whose stdout or stderr is connected to the journal) names the file with dev and
 * ino, else 0 (also for NULL or a malformed value). Pure. */
int dmn_log_is_journal(const char *journal_stream, unsigned long long dev, unsigned long long ino);

/* Formats one line of msg at priority prio into buf (len > 0; cut to fit, always ending in
 * '\n' and NUL-terminated) in the journal's form or the terminal's; returns its length. Pure. */
size_t dmn_log_format(char *buf, size_t len, int journal, int prio, const char *msg);

/* Chooses the form once, from JOURNAL_STREAM and fstat(2) of stderr. Main thread, at start. */
void dmn_log_init(void);

/* Writes one line to stderr in a single write(2). Loop thread. */
void dmn_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
