// scimesh-launch: fills an allocation with leases from a scimesh coordinator.
#include "launcher/cli.h"

int main(int argc, char** argv) { return scimesh::launcher::RunCli(argc, argv); }
