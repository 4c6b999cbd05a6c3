// Observed order of accuracy from the outputs of solves at several resolutions.
#include "examples/poisson/convergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "protocol/util/json_io.h"

namespace scimesh::poisson {

double ObservedOrder(double e_coarse, double e_fine, double h_coarse, double h_fine) {
  return std::log(e_coarse / e_fine) / std::log(h_coarse / h_fine);
}

Result<std::vector<ConvergenceRow>> ConvergenceRows(std::string_view previous_json) {
  auto doc = ParseJson(previous_json, "previous outputs");  // depth-limited: the outputs are other steps'
  if (!doc.ok() || !doc->IsObject()) return Status::InvalidArgument("previous outputs are not a JSON object");
  std::vector<ConvergenceRow> rows;
  for (const auto& m : std::as_const(*doc).GetObject()) {
    const auto& out = m.value;
    if (!out.IsObject()) continue;
    auto n = out.FindMember("n"), err = out.FindMember("l2_error");
    if (n == out.MemberEnd() || !n->value.IsInt() || err == out.MemberEnd() || !err->value.IsNumber()) continue;
    ConvergenceRow row;
    row.step_id = m.name.GetString();
    row.n = n->value.GetInt();
    row.l2_error = err->value.GetDouble();
    auto h = out.FindMember("h");
    row.h = h != out.MemberEnd() && h->value.IsNumber() ? h->value.GetDouble() : 1.0 / (row.n + 1);
    auto it = out.FindMember("iterations");
    row.iterations = it != out.MemberEnd() && it->value.IsInt() ? it->value.GetInt() : 0;
    auto conv = out.FindMember("converged");
    if (conv != out.MemberEnd() && conv->value.IsBool() && !conv->value.GetBool())
      return Status::InvalidArgument("solve '" + row.step_id + "' did not converge: its error is not the mesh's");
    if (!(row.l2_error > 0) || !(row.h > 0))
      return Status::InvalidArgument("solve '" + row.step_id + "' has no positive l2_error and h");
    rows.push_back(std::move(row));
  }
  if (rows.size() < 2)
    return Status::InvalidArgument("a convergence study needs at least two solves, found " +
                                   std::to_string(rows.size()));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.h > b.h; });
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].h == rows[i - 1].h)
      return Status::InvalidArgument("solves '" + rows[i - 1].step_id + "' and '" + rows[i].step_id +
                                     "' have the same mesh size");
    rows[i].observed_order = ObservedOrder(rows[i - 1].l2_error, rows[i].l2_error, rows[i - 1].h, rows[i].h);
  }
  return rows;
}

std::string ConvergenceTable(const std::vector<ConvergenceRow>& rows) {
  std::string out = "#     n            h  iterations       L2 error  observed order\n";
  char line[160];
  for (const auto& r : rows) {
    char order[32] = "-";
    // Wide enough for any row: |order| is a ratio of logs of doubles, below 1e19.
    if (r.observed_order) (void)std::snprintf(order, sizeof order, "%.4f", *r.observed_order);
    (void)std::snprintf(line, sizeof line, "%7d  %11.5e  %10d  %13.6e  %14s\n", r.n, r.h, r.iterations,
                        r.l2_error, order);
    out += line;
  }
  return out;
}

std::string ConvergenceJson(const std::vector<ConvergenceRow>& rows) {
  return ObjectText([&](JsonWriter& w) {
    WriteArray(w, "table", rows, [&](JsonWriter& rw, const ConvergenceRow& r) {
      rw.StartObject();
      WriteString(rw, "step", r.step_id);
      WriteInt(rw, "n", r.n);
      WriteDouble(rw, "h", r.h);
      WriteInt(rw, "iterations", r.iterations);
      WriteDouble(rw, "l2_error", r.l2_error);
      WriteOptDouble(rw, "observed_order", r.observed_order);
      rw.EndObject();
    });
    WriteOptDouble(w, "observed_order", rows.empty() ? std::nullopt : rows.back().observed_order);
  });
}

}  // namespace scimesh::poisson
