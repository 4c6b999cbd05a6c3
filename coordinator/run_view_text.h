// The run API's answers as people read them: `run show`, `run list` and
// `run watch` lines. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// "<spool>/RUN/STEP/N": where an attempt's directory is under the launcher's
// spool (docs/launcher.md). The spool itself is never sent to the coordinator.
std::string AttemptDirText(const std::string& run_id, const std::string& step_id, int64_t attempt);

// "run ID  WF@V  STATUS[: REASON]", its times, then per step its status (and
// why it failed or was cancelled), its last attempt, and under it a line per
// attempt: status, error, directory, last progress and usage.
void PrintRunView(const RunView& run, std::ostream& out);

// One line per run: "ID  WF@V  STATUS  created AT[  finished AT][  correlation C]".
void PrintRunList(const RunList& list, std::ostream& out);

// "AT  TYPE  step S #N  worker W  DETAIL" (parts that are null left out).
void PrintJournalEvent(const JournalEvent& event, std::ostream& out);

// "AT  progress  step S #N  PROGRESS": a running attempt's new progress.
void PrintProgress(const std::string& at, const std::string& step_id, int64_t attempt,
                   const std::string& progress_json, std::ostream& out);

// "AT  unfittable  step S #-  no worker can fit: REASON".
void PrintUnfittable(const std::string& at, const std::string& step_id, const std::string& reason,
                     std::ostream& out);

// The run state a journal event announces ("completed" for run_completed), or
// "" when it is not one of the four run-ending events.
std::string_view RunEndOf(const JournalEvent& event);

}  // namespace scimesh::coordinator
