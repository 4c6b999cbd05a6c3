// Resolving --spank=auto|yes|no against what `srun --help` lists.
#include "launcher/step/spank_use.h"

#include <cctype>

namespace scimesh::launcher {
namespace {

constexpr std::string_view kLeaseOption = "--scimesh-lease";

bool EndsOption(std::string_view help, size_t at) {
  if (at >= help.size()) return true;
  const unsigned char c = static_cast<unsigned char>(help[at]);
  return c == '=' || c == '[' || std::isspace(c) != 0;
}

}  // namespace

Result<SpankUse> ParseSpankUse(std::string_view value) {
  if (value == "auto") return SpankUse::kAuto;
  if (value == "yes") return SpankUse::kYes;
  if (value == "no") return SpankUse::kNo;
  return Status::InvalidArgument("--spank takes auto, yes or no, not '" + std::string(value) + "'");
}

bool SrunHelpListsLeaseOption(std::string_view help) {
  for (size_t at = help.find(kLeaseOption); at != std::string_view::npos;
       at = help.find(kLeaseOption, at + 1)) {
    // An option starts a word: at the start of a line or after blanks.
    const bool starts = at == 0 || std::isspace(static_cast<unsigned char>(help[at - 1])) != 0;
    if (starts && EndsOption(help, at + kLeaseOption.size())) return true;
  }
  return false;
}

Result<bool> ResolveSpankUse(SpankUse use, Backend backend,
                             const std::function<Result<std::string>()>& srun_help, std::string* note) {
  if (use == SpankUse::kNo) return false;
  if (backend != Backend::kSlurm) {
    if (use == SpankUse::kYes) {
      return Status::InvalidArgument("--spank=yes needs the slurm backend (the SPANK plugin acts on srun steps)");
    }
    return false;
  }
  Result<std::string> help = srun_help();
  const bool listed = help.ok() && SrunHelpListsLeaseOption(*help);
  if (use == SpankUse::kYes) {
    if (listed) return true;
    return Status::InvalidArgument(
        help.ok() ? "--spank=yes: the SPANK plugin is not loaded here (srun --help lists no --scimesh-lease); "
                    "ask your administrator, or use --spank=no"
                  : "--spank=yes: cannot ask srun whether the SPANK plugin is loaded: " + help.status().message());
  }
  if (note != nullptr) {
    *note = listed     ? "the SPANK plugin is loaded: steps get --scimesh-lease"
            : help.ok() ? "the SPANK plugin is not loaded: steps run without --scimesh-lease"
                        : "cannot ask srun whether the SPANK plugin is loaded (" + help.status().message() +
                              "): steps run without --scimesh-lease";
  }
  return listed;
}

}  // namespace scimesh::launcher
