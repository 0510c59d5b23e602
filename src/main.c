/* main: the pixrelay binary's entry point and nothing else. Everything else
 * is in the static library that every test links too (meson.build); the
 * commands start at cli_main (src/cli/cli.c). */
#include "pixrelay/cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
