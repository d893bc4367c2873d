/* The daemon under systemd (Type=notify): readiness, status and stop reported over the sd_notify protocol; nothing is sent when no NOTIFY_SOCKET was given. */
#ifndef DMN_SERVICE_H
#define DMN_SERVICE_H

/* Sends "READY=1" and "STATUS=status": call once the RPC port listens and the session is
 * queued, so that a unit ordered after this one finds the port answering. Loop thread. */
void dmn_svc_ready(const char *status);
/* Sends "STATUS=status" (what `systemctl status` shows). Loop thread. */
void dmn_svc_status(const char *status);
/* Sends "STOPPING=1" and "STATUS=status" when shutdown begins. Loop thread. */
void dmn_svc_stopping(const char *status);

#endif
