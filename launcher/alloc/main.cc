// scimesh-alloc: submits the SLURM allocations a coordinator's queue needs.
#include "launcher/alloc/alloc_cli.h"

int main(int argc, char** argv) { return scimesh::alloc::RunAllocCli(argc, argv); }
