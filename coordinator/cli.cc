// Subcommand dispatch, the `keys add` command and `version`.
#include "coordinator/cli.h"

#include <cstdlib>
#include <iostream>
#include <map>

#include "coordinator/keys.h"
#include "coordinator/run_command.h"
#include "coordinator/serve.h"
#include "coordinator/serve_config.h"
#include "protocol/util/version.h"

namespace scimesh::coordinator {
namespace {

constexpr char kUsage[] = R"usage(Usage: scimesh-coordinator <command> [options]
       scimesh-coordinator --version

The reference lease coordinator of scimesh-hpc (docs/coordinator.md).

Commands:
  serve     run the coordinator (scimesh-coordinator serve --help)
  keys add  create a key:  keys add NAME --scope worker|execute|admin|read[,..]
                                  --keys PATH --secret-out FILE [--workflows GLOBS]
  run       start, show, watch or cancel runs (scimesh-coordinator run --help)
  version   print the version, the commit and the SLURM release it was built
            from, and exit (the same as --version)
)usage";

constexpr char kKeysUsage[] = R"usage(Usage: scimesh-coordinator keys add NAME --scope worker|execute|admin|read[,..]
                                    --keys PATH --secret-out FILE [--workflows GLOBS]

Appends "NAME SCOPES sha256(secret)" to the keys file (created 0600) and
writes the new secret to FILE (created 0600). Prints only
"added key NAME (SCOPES)": the secret is never printed.
Scopes: worker (worker calls, artifact download), execute (the run API on its
own runs, their artifacts), admin (everything, every run, any lease), read
(reads every run and artifact, changes nothing). A running coordinator picks
the new key up within a second.
--workflows GLOBS: the workflows a worker key may register, comma-separated
globs on the name ('*' any run of characters, '?' one), e.g. "chem-*,qc".
Required with the worker scope: give '*' for a single-tenant site, where one
team's workers serve every workflow. (A keys-file line without workflows=, as
older releases wrote, may register the workflows nobody registered before
it, and then only those.)
)usage";

int KeysCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kKeysUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "add") {
    std::cerr << "scimesh-coordinator keys: unknown subcommand '" << args[0] << "'\n\n" << kKeysUsage;
    return 2;
  }
  std::string name;
  std::map<std::string, std::string> flags;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << kKeysUsage;
      return 0;
    }
    if (a.rfind("--", 0) == 0) {
      auto [flag, value] = TakeFlag(args, i);
      if (!value) {
        std::cerr << "scimesh-coordinator keys add: --" << flag << " needs a value\n";
        return 2;
      }
      if (flag != "scope" && flag != "keys" && flag != "secret-out" && flag != "workflows") {
        std::cerr << "scimesh-coordinator keys add: unknown flag --" << flag << "\n";
        return 2;
      }
      flags[flag] = *value;
    } else if (name.empty()) {
      name = a;
    } else {
      std::cerr << "scimesh-coordinator keys add: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (name.empty() || !flags.count("scope") || !flags.count("keys") || !flags.count("secret-out")) {
    std::cerr << "scimesh-coordinator keys add: NAME, --scope, --keys and --secret-out are required\n\n" << kKeysUsage;
    return 2;
  }
  auto added = AddKey(flags["keys"], name, flags["scope"], flags["secret-out"], flags["workflows"]);
  if (!added.ok()) {
    std::cerr << "scimesh-coordinator keys add: " << added.status().message() << "\n";
    return 1;
  }
  std::cout << *added << std::endl;
  return 0;
}

}  // namespace

int RunCoordinatorCli(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "serve") {
    auto config = ParseServeConfig(rest, [](const char* name) { return std::getenv(name); });
    if (!config.ok()) {
      std::cerr << "scimesh-coordinator serve: " << config.status().message() << "\n";
      return 2;
    }
    if (config->help) {
      std::cout << ServeUsage();
      return 0;
    }
    return RunServe(*config);
  }
  if (args[0] == "--version" || args[0] == "version") {
    if (!rest.empty()) {
      std::cerr << "scimesh-coordinator " << args[0] << ": unexpected argument '" << rest[0] << "'\n";
      return 2;
    }
    std::cout << VersionLine("scimesh-coordinator") << "\n";
    return 0;
  }
  if (args[0] == "keys") return KeysCommand(rest);
  if (args[0] == "run") return RunRunCommand(rest);
  std::cerr << "scimesh-coordinator: unknown command '" << args[0] << "'\n\n" << kUsage;
  return 2;
}

FlagArg TakeFlag(const std::vector<std::string>& args, size_t& i) {
  FlagArg flag{args[i].substr(2), std::nullopt};
  if (size_t eq = flag.name.find('='); eq != std::string::npos) {
    flag.value = flag.name.substr(eq + 1);
    flag.name.resize(eq);
  } else if (i + 1 < args.size()) {
    flag.value = args[++i];
  }
  return flag;
}

}  // namespace scimesh::coordinator
