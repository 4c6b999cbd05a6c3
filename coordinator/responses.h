// Wire JSON of every reply and of the error body (docs/protocol.md). The one
// place where response field names are spelled. Pure; thread-safe.
#pragma once

#include <string>

#include "coordinator/api_error.h"
#include "coordinator/replies.h"

namespace scimesh::coordinator {

std::string ToJson(const RegisterReply& r);
std::string ToJson(const ClaimReply& r);
std::string ToJson(const LeaseExtension& r);
std::string CompleteJson();  // {"outcome": "completed"}
std::string ToJson(const FailReply& r);
std::string ToJson(const ArtifactRef& r);
std::string ToJson(const RunStatusReply& r);
std::string ToJson(const RunView& r);
std::string ToJson(const JournalView& r);
std::string ToJson(const ApiError& e);

}  // namespace scimesh::coordinator
