/* main.c - entry point; everything happens in server_main(). */
#include "server.h"

int main(int argc, char **argv)
{
    return server_main(argc, argv);
}
