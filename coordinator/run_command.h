// `scimesh-coordinator run start|list|show|watch|cancel`: the run API for people,
// so the demo and users need no curl. Talks HTTP to a coordinator at --url
// ($SCIMESH_URL, default http://127.0.0.1:8470) with the token from
// $SCIMESH_TOKEN_FILE or $SCIMESH_TOKEN (never argv).
#pragma once

#include <string>
#include <vector>

namespace scimesh::coordinator {

// `args` are the words after "run". Returns the exit status: 0 success (for
// watch: the run completed), 1 refused or the run did not complete, 2 usage,
// 3 the coordinator could not be reached.
int RunRunCommand(const std::vector<std::string>& args);

std::string RunUsage();

}  // namespace scimesh::coordinator
