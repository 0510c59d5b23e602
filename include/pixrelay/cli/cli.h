/* cli: the subcommands of the pixrelay binary and their --help texts. */
#ifndef PIXRELAY_CLI_H
#define PIXRELAY_CLI_H

/* Run the command line; returns the process exit code (0 ok, 1 failure,
 * 2 usage error). */
int cli_main(int argc, char **argv);

#endif
