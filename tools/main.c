/* tools/main.c — the dlcc executable's entry point (everything else lives in
 * the dlcc_tools library so that unit tests can call it). */
#include "tools/tools.h"

int main(int argc, char **argv)
{
    return dlcc_main(argc, argv);
}
