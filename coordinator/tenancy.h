// Tenancy: which key may act as a worker_id, register a workflow, and read or
// cancel a run (docs/coordinator.md "Tenancy"). Pure decisions over the owners
// the Ledger stores; the Ledger applies them inside its transactions.
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "coordinator/keys.h"

namespace scimesh::coordinator {

// `glob` matches all of `name`; `*` is any run of characters, `?` one.
bool GlobMatches(std::string_view glob, std::string_view name);

// A worker_id belongs to the key that registered it first (`owner`; nullopt:
// never registered). Admin keys may act as any worker.
bool MayActAsWorker(const KeyIdentity& key, const std::optional<std::string>& owner);

// Registering (and so serving) `workflow`, which belongs to `owner` (the key
// that registered it first; nullopt: nobody yet). Admin: any workflow. A key
// with `workflows=` globs: the workflows they match, whoever registered them
// first. Otherwise: a workflow nobody owns yet, or its own.
bool MayRegisterWorkflow(const KeyIdentity& key, std::string_view workflow, const std::optional<std::string>& owner);

// Reading a run (show, journal, watch, its artifacts) started by `owner`
// (nullopt: a run from before runs had owners). Admin and read keys: every
// run; execute keys: their own.
bool MayReadRun(const KeyIdentity& key, const std::optional<std::string>& owner);

// Reading the runs of every key (the run list unfiltered by owner): admin and
// read keys.
bool MayReadRunOfAnyOwner(const KeyIdentity& key);

// Cancelling a run: admin, or the key that started it.
bool MayCancelRun(const KeyIdentity& key, const std::optional<std::string>& owner);

}  // namespace scimesh::coordinator
