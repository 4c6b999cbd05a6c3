// This machine's name, one spelling for every component.
#include "protocol/util/host_name.h"

#include <unistd.h>

#include <climits>

namespace scimesh {

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {0};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

}  // namespace scimesh
