/* server: `pixrelay serve`, wiring Redis (embedded or given), the HTTP API
 * and signals into one libevent loop. */
#ifndef PIXRELAY_SERVER_H
#define PIXRELAY_SERVER_H

#include "pixrelay/config.h"

/* Run until SIGTERM/SIGINT. Returns the process exit code. */
int server_run(const struct config *cfg);

#endif
