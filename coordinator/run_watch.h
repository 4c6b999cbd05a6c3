// `scimesh-coordinator run watch`: follows a run until it ends and prints what
// a person waits for — the journal's events as they are appended, each
// running attempt's progress as it changes, a step no worker can fit — and,
// from the first failed poll on, that the coordinator cannot be reached.
// Used by one thread (the command's); the Client is borrowed.
#pragma once

#include <ostream>
#include <string>

#include "protocol/client/client.h"
#include "protocol/util/status.h"

namespace scimesh::coordinator {

struct WatchOptions {
  Millis poll{500};           // between polls while the run runs
  Millis retry{1000};         // between tries while the coordinator cannot be reached
  Millis budget{60000};       // how long it may stay unreachable before watch gives up
  Millis note_every{10000};   // how often "cannot reach" is said again
};

// Polls `run_id` through `client` (whose own retry budget should be zero, so
// that each failed poll comes back at once) until the run ends. The stream
// goes to `out`, ending with "run ID: STATE"; "cannot reach URL (retrying, N s
// so far): CAUSE" and "reached URL again" go to `err`. Returns whether the run
// completed; an error when the coordinator refused a poll (404, 403, ...) or
// could not be reached for `budget`.
Result<bool> WatchRun(Client& client, const std::string& run_id, const WatchOptions& options, std::ostream& out,
                      std::ostream& err);

}  // namespace scimesh::coordinator
