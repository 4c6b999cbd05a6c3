// Directory artifacts in the attempt directory: a directory a step left
// under artifacts/ is packed in place into one archive file before the
// upload, and an input artifact of the directory media type is unpacked as
// inputs/<step>/<name>/ before the step runs (launcher/directory_archive.h).
//
// Free functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "launcher/step/directory_archive.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

// Replaces directory artifacts/<name> of the attempt directory `dir_fd` by
// its archive (the tree moves to artifacts/.<name>.dir, which is not
// uploaded). Refused: <name> is not a directory, or the tree holds anything
// the archive may not (a link, a device, over the limits).
Status PackDirectoryArtifact(int dir_fd, const std::string& name, const ArchiveLimits& limits = {});

// Unpacks every input of `inputs` whose media type is the directory one:
// the verified archive inputs/<step>/<name> becomes the directory
// inputs/<step>/<name>/, checked whole before anything is written.
Status UnpackDirectoryInputs(int dir_fd, const std::vector<InputArtifact>& inputs, const ArchiveLimits& limits = {});

}  // namespace scimesh::launcher
