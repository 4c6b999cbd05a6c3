// The run API's answers as people read them: `run show` and `run watch` lines.
// Pure; thread-safe.
#pragma once

#include <ostream>

#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// "run ID  WF@V  STATUS", its times, then per step its last attempt and, under
// it, each attempt's last progress and usage where it reported any.
void PrintRunView(const RunView& run, std::ostream& out);

// "AT  TYPE  step S #N  worker W  DETAIL" (parts that are null left out).
void PrintJournalEvent(const JournalEvent& event, std::ostream& out);

// The run state a journal event announces ("completed" for run_completed), or
// "" when it is not one of the four run-ending events.
std::string_view RunEndOf(const JournalEvent& event);

}  // namespace scimesh::coordinator
