// Writes a field of the model problem as a VTK ImageData XML file (.vti),
// ASCII, which ParaView and VisIt open as they are.
#pragma once

#include <string>
#include <vector>

#include "examples/poisson/subdomain.h"
#include "protocol/util/status.h"

namespace scimesh::poisson {

// Collective: gathers `u` (owned points of every rank) to rank 0 of s.comm(),
// which writes `path` with the whole (n+2)³ node grid, boundary nodes
// included (u = 0 there), origin 0 and spacing h, and two point arrays:
// "u" (the discrete solution) and "error" (u - exact). Every rank gets the
// same Status: Io when rank 0 could not write the file.
Status WriteSolutionVti(const Subdomain& s, const std::vector<double>& u, const std::string& path);

}  // namespace scimesh::poisson
