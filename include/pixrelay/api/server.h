/* server: `pixrelay serve`, wiring Redis (embedded or given), the HTTP API
 * and signals into one libevent loop. */
#ifndef PIXRELAY_SERVER_H
#define PIXRELAY_SERVER_H

#include "pixrelay/core/config.h"

/* Run until SIGTERM/SIGINT. Returns the process exit code. A derived
 * base URL is rewritten with the port actually bound (listen port 0). */
int server_run(struct config *cfg);

#endif
