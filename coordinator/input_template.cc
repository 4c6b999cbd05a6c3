// Placeholder scanning, path checking and resolution, and rendering.
#include "coordinator/input_template.h"

#include <optional>
#include <type_traits>

#include "coordinator/json_text.h"

namespace scimesh::coordinator {
namespace {

struct Placeholder {
  size_t begin;  // of "{{"
  size_t end;    // one past "}}"
  std::string_view path;
};

// Splits a string's placeholders; nullopt + why when one is malformed.
std::optional<std::vector<Placeholder>> Scan(std::string_view s, std::string* why) {
  std::vector<Placeholder> out;
  size_t pos = 0;
  while ((pos = s.find("{{", pos)) != std::string_view::npos) {
    size_t close = s.find("}}", pos + 2);
    if (close == std::string_view::npos) {
      *why = "'{{' without a closing '}}'";
      return std::nullopt;
    }
    std::string_view path = s.substr(pos + 2, close - pos - 2);
    for (char c : path) {
      if (c == '{' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        *why = "placeholder '{{" + std::string(path) + "}}' holds a space or a brace";
        return std::nullopt;
      }
    }
    out.push_back({pos, close + 2, path});
    pos = close + 2;
  }
  return out;
}

// The step id of a `steps.<id>.output...` path: the longest id in `ids`
// (ids may hold dots) followed by ".output" and then the end or a '.'.
template <typename Ids>
std::optional<std::string> StepOf(std::string_view path, const Ids& ids, std::string_view* rest) {
  std::optional<std::string> best;
  for (const auto& entry : ids) {
    std::string_view id;
    if constexpr (std::is_same_v<typename Ids::value_type, std::string>) {
      id = entry;
    } else {
      id = entry.first;
    }
    std::string prefix = "steps." + std::string(id) + ".output";
    if (path.substr(0, prefix.size()) != prefix) continue;
    if (path.size() != prefix.size() && path[prefix.size()] != '.') continue;
    if (!best || id.size() > best->size()) {
      best = std::string(id);
      *rest = path.substr(prefix.size());
    }
  }
  return best;
}

// "" or why the segments after a root (".a.b" or "") are malformed.
std::string CheckTail(std::string_view tail, std::string_view path) {
  if (tail.empty()) return "";
  if (tail.front() != '.' || tail.back() == '.' || tail.find("..") != std::string_view::npos) {
    return "placeholder '{{" + std::string(path) + "}}' has an empty path segment";
  }
  return "";
}

std::string CheckPath(std::string_view path, const std::vector<std::string>& needs) {
  if (path == "run.id") return "";
  for (std::string_view root : {std::string_view("input"), std::string_view("run.state")}) {
    if (path.substr(0, root.size()) == root &&
        (path.size() == root.size() || path[root.size()] == '.')) {
      return CheckTail(path.substr(root.size()), path);
    }
  }
  if (path.substr(0, 6) == "steps.") {
    std::string_view rest;
    if (!StepOf(path, needs, &rest)) {
      return "placeholder '{{" + std::string(path) + "}}' must read steps.<id>.output of a step in needs";
    }
    return CheckTail(rest, path);
  }
  return "placeholder '{{" + std::string(path) + "}}' must start with input, run.id, run.state or steps.<id>.output";
}

std::string CheckValue(const rapidjson::Value& v, const std::vector<std::string>& needs) {
  if (v.IsString()) {
    std::string why;
    auto ps = Scan(std::string_view(v.GetString(), v.GetStringLength()), &why);
    if (!ps) return why;
    for (const auto& p : *ps) {
      std::string bad = CheckPath(p.path, needs);
      if (!bad.empty()) return bad;
    }
  } else if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      std::string bad = CheckValue(it->value, needs);
      if (!bad.empty()) return bad;
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) {
      std::string bad = CheckValue(e, needs);
      if (!bad.empty()) return bad;
    }
  }
  return "";
}

// Walks ".a.0.b" from `cur`: keys for objects, decimal indices for arrays.
const rapidjson::Value* Walk(const rapidjson::Value* cur, std::string_view tail) {
  while (cur != nullptr && !tail.empty()) {
    tail.remove_prefix(1);  // the '.'
    size_t dot = tail.find('.');
    std::string_view seg = tail.substr(0, dot);
    tail = dot == std::string_view::npos ? std::string_view() : tail.substr(dot);
    if (cur->IsObject()) {
      auto it = cur->FindMember(rapidjson::Value(seg.data(), static_cast<rapidjson::SizeType>(seg.size())));
      cur = it == cur->MemberEnd() ? nullptr : &it->value;
    } else if (cur->IsArray()) {
      if (seg.empty() || seg.size() > 9 || seg.find_first_not_of("0123456789") != std::string_view::npos) return nullptr;
      size_t i = std::stoul(std::string(seg));
      cur = i < cur->Size() ? &(*cur)[static_cast<rapidjson::SizeType>(i)] : nullptr;
    } else {
      cur = nullptr;
    }
  }
  return cur;
}

class Renderer {
 public:
  explicit Renderer(const TemplateScope& scope) : scope_(scope) {
    run_id_.SetString(scope.run_id.data(), static_cast<rapidjson::SizeType>(scope.run_id.size()));
  }

  const rapidjson::Value* Resolve(std::string_view path) const {
    if (path == "run.id") return &run_id_;
    if (path == "input" || path.substr(0, 6) == "input.") return Walk(scope_.input, path.substr(5));
    if (path == "run.state" || path.substr(0, 10) == "run.state.") return Walk(scope_.state, path.substr(9));
    std::string_view rest;
    auto id = StepOf(path, scope_.outputs, &rest);
    if (!id) return nullptr;
    return Walk(scope_.outputs.find(*id)->second, rest);
  }

  // Writes the rendered `v`; false + missing path when one does not resolve.
  bool Render(const rapidjson::Value& v, JsonWriter& w) {
    if (v.IsString()) return RenderString(std::string_view(v.GetString(), v.GetStringLength()), w);
    if (v.IsObject()) {
      w.StartObject();
      for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        w.Key(it->name.GetString(), it->name.GetStringLength());
        if (!Render(it->value, w)) return false;
      }
      w.EndObject();
      return true;
    }
    if (v.IsArray()) {
      w.StartArray();
      for (const auto& e : v.GetArray()) {
        if (!Render(e, w)) return false;
      }
      w.EndArray();
      return true;
    }
    v.Accept(w);
    return true;
  }

  std::string missing;

 private:
  bool RenderString(std::string_view s, JsonWriter& w) {
    std::string why;
    auto ps = Scan(s, &why);
    if (!ps || ps->empty()) {  // malformed cannot pass register; render literally
      WriteString(w, s);
      return true;
    }
    if (ps->size() == 1 && (*ps)[0].begin == 0 && (*ps)[0].end == s.size()) {
      const rapidjson::Value* val = Resolve((*ps)[0].path);
      if (val == nullptr) return Missing((*ps)[0].path);
      val->Accept(w);
      return true;
    }
    std::string out;
    size_t pos = 0;
    for (const auto& p : *ps) {
      out.append(s.substr(pos, p.begin - pos));
      const rapidjson::Value* val = Resolve(p.path);
      if (val == nullptr) return Missing(p.path);
      if (val->IsString()) {
        out.append(val->GetString(), val->GetStringLength());
      } else {
        out += ToJsonText(*val);
      }
      pos = p.end;
    }
    out.append(s.substr(pos));
    WriteString(w, out);
    return true;
  }

  bool Missing(std::string_view path) {
    missing = std::string(path);
    return false;
  }

  const TemplateScope& scope_;
  rapidjson::Value run_id_;
};

}  // namespace

std::string CheckTemplate(std::string_view template_json, const std::vector<std::string>& needs) {
  auto doc = ParseJson(template_json);
  if (!doc.ok()) return "is not JSON: " + doc.status().message();
  return CheckValue(*doc.value(), needs);
}

Result<std::string> RenderTemplate(std::string_view template_json, const TemplateScope& scope) {
  auto doc = ParseJson(template_json);
  if (!doc.ok()) return Status::Internal("stored template is not JSON: " + doc.status().message());
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  Renderer r(scope);
  if (!r.Render(*doc.value(), w)) return Status::NotFound("input template: '" + r.missing + "' not found");
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace scimesh::coordinator
