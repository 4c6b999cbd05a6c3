// Whether each srun gets --scimesh-lease: the user's --spank choice, and
// whether the site's SPANK plugin is loaded (srun --help lists the option).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "launcher/step/launch_command.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

// --spank[=auto|yes|no]: auto (the default) uses the plugin when srun lists
// its option; yes requires it; no never passes the option.
enum class SpankUse { kAuto, kYes, kNo };

// "auto" | "yes" | "no" (the bare flag --spank is "yes"). InvalidArgument
// for anything else.
Result<SpankUse> ParseSpankUse(std::string_view value);

// Whether `srun --help` output lists the --scimesh-lease option (as an
// option of its own: --scimesh-lease-x is another option). Pure.
bool SrunHelpListsLeaseOption(std::string_view srun_help);

// Decides whether to pass --scimesh-lease. `srun_help` runs `srun --help`
// and is called at most once, only when the answer depends on it (slurm
// backend, auto or yes). auto: true when the option is listed; false when it
// is not or srun cannot say (the reason goes to *note when non-null).
// yes: true, or InvalidArgument when the backend is local, srun fails or the
// option is not listed. no: false. Thread-safe if srun_help is.
Result<bool> ResolveSpankUse(SpankUse use, Backend backend,
                             const std::function<Result<std::string>()>& srun_help,
                             std::string* note = nullptr);

}  // namespace scimesh::launcher
