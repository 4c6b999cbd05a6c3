// Ledger: artifact uploads on a lease (checked like a heartbeat, idempotent
// per lease + name + sha256) and artifact lookup for downloads.
#include "coordinator/ledger_internal.h"

namespace scimesh::coordinator {
namespace {

constexpr char kSelectUpload[] = "SELECT uri, sha256, size, media_type FROM uploads WHERE lease_id = ?1 AND name = ?2";
constexpr char kInsertUpload[] =
    "INSERT INTO uploads(lease_id, name, attempt, worker_id, sha256, size, media_type, uri, uploaded_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
constexpr char kSelectMediaType[] = "SELECT media_type FROM uploads WHERE sha256 = ?1 LIMIT 1";
// What a lease has uploaded so far, without the name being uploaded now.
constexpr char kLeaseUploads[] = "SELECT count(*), coalesce(sum(size), 0) FROM uploads WHERE lease_id = ?1 AND name <> ?2";
// Uploads of attempts that ended without completing, before ?1.
constexpr char kForgetAbandoned[] =
    "DELETE FROM uploads WHERE lease_id IN (SELECT lease_id FROM attempts WHERE status IN "
    "('failed', 'expired', 'cancelled') AND ended_at IS NOT NULL AND ended_at < ?1)";
constexpr char kReferenced[] =
    "SELECT 1 FROM uploads WHERE sha256 = ?1 UNION ALL SELECT 1 FROM step_artifacts WHERE sha256 = ?1 LIMIT 1";
// An artifact uploaded on a lease of one of the key's runs.
constexpr char kArtifactOfKey[] =
    "SELECT 1 FROM uploads u JOIN attempts a ON a.lease_id = u.lease_id "
    "JOIN run_owners o ON o.run_id = a.run_id WHERE u.sha256 = ?1 AND o.key_name = ?2 LIMIT 1";

}  // namespace

// 413 when one more upload of `size` bytes (-1: not known yet) named `name`
// would take the lease past its quota; a replay of `name` counts once.
std::optional<ApiError> Ledger::OverQuota(std::string_view lease_id, const std::string& name, int64_t size) {
  int64_t count = 0, bytes = 0;
  auto read = db_->FirstRow(kLeaseUploads, {lease_id, name}, [&](const Row& r) {
    count = r.Int(0);
    bytes = r.Int(1);
  });
  if (!read.ok()) return Broken(read.status());
  const ArtifactQuota& quota = options_.artifact_quota;
  const std::string what = "this lease's artifact quota (" + std::to_string(quota.count) + " files, " +
                           std::to_string(quota.bytes) + " bytes in all)";
  if (count + 1 > quota.count) {
    return ApiError::TooLarge("a " + std::to_string(count + 1) + "th artifact would exceed " + what);
  }
  if (size >= 0 && quota.bytes > 0 && bytes + size > quota.bytes) {
    return ApiError::TooLarge(std::to_string(bytes + size) + " bytes of artifacts would exceed " + what);
  }
  return std::nullopt;
}

// The artifact uploaded as `name` on this lease before, if any; 400 when it
// had another sha256.
Result<std::optional<ArtifactRef>> Ledger::LoadUpload(std::string_view lease_id, const std::string& name) {
  std::optional<ArtifactRef> upload;
  auto read = [&](const Row& r) { upload = ArtifactRef{name, r.Text(0), r.Text(1), r.Int(2), r.Text(3)}; };
  SCIMESH_RETURN_IF_ERROR(db_->FirstRow(kSelectUpload, {lease_id, name}, read).status());
  return upload;
}

ApiResult<std::optional<ArtifactRef>> Ledger::EarlierUpload(std::string_view lease_id, const std::string& name,
                                                            const std::string& sha256) {
  auto loaded = LoadUpload(lease_id, name);
  if (!loaded.ok()) return Broken(loaded.status());
  const std::optional<ArtifactRef>& earlier = loaded.value();
  if (earlier && earlier->sha256 != sha256) {
    return ApiError::BadRequest("name", "'" + name + "' was already uploaded on this lease with another sha256");
  }
  return earlier;
}

ApiResult<Done> Ledger::CheckUpload(std::string_view lease_id, const LeaseCaller& caller, const std::string& name,
                                    const std::string& sha256, int64_t declared_size) {
  return Transact<Done>([&](Tx& tx) -> ApiResult<Done> {
    auto opened = OpenLease(tx, lease_id, caller, LeaseCall::kArtifact);
    if (!opened.ok()) return opened.error();
    if (auto over = OverQuota(lease_id, name, declared_size)) return *over;
    auto earlier = EarlierUpload(lease_id, name, sha256);
    if (!earlier.ok()) return earlier.error();
    return Done{};
  });
}

ApiResult<RecordedUpload> Ledger::RecordUpload(std::string_view lease_id, const LeaseCaller& caller,
                                               const std::string& name, const std::string& sha256, int64_t size,
                                               const std::string& media_type) {
  return Transact<RecordedUpload>([&](Tx& tx) -> ApiResult<RecordedUpload> {
    auto opened = OpenLease(tx, lease_id, caller, LeaseCall::kArtifact);
    if (!opened.ok()) return opened.error();
    const AttemptRow& row = opened.value();
    auto earlier = EarlierUpload(lease_id, name, sha256);
    if (!earlier.ok()) return earlier.error();
    if (earlier.value()) return RecordedUpload{*earlier.value(), false};
    if (auto over = OverQuota(lease_id, name, size)) return *over;
    ArtifactRef ref{name, options_.public_url + "/v1/api/artifacts/" + sha256, sha256, size, media_type};
    LEDGER_CHECK(db_->Run(kInsertUpload, {lease_id, name, row.attempt, row.worker_id, sha256, size, media_type, ref.uri,
                                          tx.now}));
    tx.Log("artifact uploaded: run={} step={} attempt={} lease={} worker_id={} name={} sha256={} size={}",
           row.run_id, row.step_id, row.attempt, row.lease_id, row.worker_id, name, sha256, size);
    return RecordedUpload{std::move(ref), true};
  });
}

ApiResult<std::string> Ledger::FindArtifact(std::string_view sha256, const KeyIdentity& key) {
  return Transact<std::string>([&](Tx&) -> ApiResult<std::string> {
    auto media_type = db_->FirstText(kSelectMediaType, {sha256});
    if (!media_type.ok()) return Broken(media_type.status());
    if (!*media_type) return ApiError::NotFound("no artifact " + std::string(sha256));
    // Workers fetch their inputs by digest; admin and read keys see all.
    if ((key.scopes & (kScopeWorker | kScopeAdmin | kScopeRead)) != 0) return **media_type;
    auto mine = db_->Exists(kArtifactOfKey, {sha256, key.name});
    if (!mine.ok()) return Broken(mine.status());
    // As if absent: a 403 would tell another tenant that these bytes exist.
    if (!*mine) return ApiError::NotFound("no artifact " + std::string(sha256));
    return **media_type;
  });
}

Status Ledger::ForgetAbandonedUploads() {
  auto r = Transact<Done>([&](Tx& tx) -> ApiResult<Done> {
    LEDGER_CHECK(db_->Run(kForgetAbandoned, {tx.now - options_.artifact_grace_ms}));
    return Done{};
  });
  return r.ok() ? Status::Ok() : Status::Internal(r.error().message);
}

Result<bool> Ledger::ArtifactReferenced(std::string_view sha256) {
  auto r = Transact<bool>([&](Tx&) -> ApiResult<bool> {
    auto referenced = db_->Exists(kReferenced, {sha256});
    if (!referenced.ok()) return Broken(referenced.status());
    return *referenced;
  });
  if (!r.ok()) return Status::Internal(r.error().message);
  return r.value();
}

}  // namespace scimesh::coordinator
