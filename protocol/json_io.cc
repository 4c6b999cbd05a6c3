// Depth-limited JSON parsing and typed field access for the wire parsers.
#include "protocol/json_io.h"

#include <unordered_set>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "protocol/json_number.h"

namespace scimesh {
namespace {

// Nesting depth of JSON text, counting brackets outside string literals.
// Linear and allocation-free, so it is safe on any input.
int MaxDepth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{': case '[':
        if (++depth > max_depth) max_depth = depth;
        break;
      case '}': case ']': --depth; break;
      default: break;
    }
  }
  return max_depth;
}

const char* TypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType: case rapidjson::kTrueType: return "a boolean";
    case rapidjson::kObjectType: return "an object";
    case rapidjson::kArrayType: return "an array";
    case rapidjson::kStringType: return "a string";
    case rapidjson::kNumberType: return "a number";
  }
  return "unknown";
}

// What is wrong with the strings and keys under `v`, or nullptr: each is
// well-formed UTF-8, and no key repeats in an object (the coordinator refuses
// both too, so a message means one thing to both sides). Depth is bounded by
// kMaxJsonDepth, checked before parsing.
const char* StringProblem(const rapidjson::Value& v) {
  if (v.IsString()) {
    return IsWellFormedUtf8(std::string_view(v.GetString(), v.GetStringLength()))
               ? nullptr
               : "a string is not valid UTF-8 (a lone surrogate escape?)";
  }
  if (v.IsArray()) {
    for (const auto& e : v.GetArray()) {
      if (const char* why = StringProblem(e)) return why;
    }
  } else if (v.IsObject()) {
    std::unordered_set<std::string_view> keys;
    for (const auto& m : v.GetObject()) {
      if (const char* why = StringProblem(m.name)) return why;
      if (!keys.emplace(m.name.GetString(), m.name.GetStringLength()).second) return "a key repeats in an object";
      if (const char* why = StringProblem(m.value)) return why;
    }
  }
  return nullptr;
}

// Document::Populate's generator: runs the reader over the text.
struct ExactParse {
  std::string_view text;
  rapidjson::Reader reader;
  const char* why = nullptr;

  bool operator()(rapidjson::Document& doc) {
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                                rapidjson::kParseNumbersAsStringsFlag;
    rapidjson::MemoryStream memory(text.data(), text.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(memory);
    ExactDocumentBuilder handler(doc);
    bool ok = !reader.Parse<kFlags>(in, handler).IsError();
    why = handler.why();
    return ok;
  }
};

}  // namespace

bool IsWellFormedUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

Result<rapidjson::Document> ParseJson(std::string_view text, std::string_view what) {
  if (MaxDepth(text) > kMaxJsonDepth) {
    return Status::InvalidArgument(std::string(what) + ": JSON nested deeper than " +
                                   std::to_string(kMaxJsonDepth));
  }
  rapidjson::Document doc;
  ExactParse parse{text, {}, nullptr};
  doc.Populate(parse);
  if (parse.reader.HasParseError()) {
    if (parse.why != nullptr) return Status::InvalidArgument(std::string(what) + ": " + parse.why);
    return Status::InvalidArgument(std::string(what) + ": malformed JSON at offset " +
                                   std::to_string(parse.reader.GetErrorOffset()) + ": " +
                                   rapidjson::GetParseError_En(parse.reader.GetParseErrorCode()));
  }
  if (const char* why = StringProblem(doc)) return Status::InvalidArgument(std::string(what) + ": " + why);
  return doc;
}

std::string ToJsonText(const rapidjson::Value& value) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  value.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

Result<std::string> CanonicalJson(std::string_view text, std::string_view what) {
  auto doc = ParseJson(text, what);
  if (!doc.ok()) return doc.status();
  return ToJsonText(*doc);
}

void WriteRawJson(JsonWriter& w, std::string_view json_text) {
  w.RawValue(json_text.data(), json_text.size(), rapidjson::kObjectType);
}

void WriteString(JsonWriter& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteInt(JsonWriter& w, std::string_view key, int64_t value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.Int64(value);
}

std::string ElementPath(std::string_view array_path, size_t index) {
  return std::string(array_path) + "[" + std::to_string(index) + "]";
}

Result<JsonObject> JsonObject::Of(const rapidjson::Value& value, std::string path) {
  if (!value.IsObject()) {
    return Status::InvalidArgument((path.empty() ? std::string("body") : path) +
                                   ": must be an object, not " + TypeName(value));
  }
  return JsonObject(value, std::move(path));
}

std::string JsonObject::FieldPath(std::string_view name) const {
  if (path_.empty()) return std::string(name);
  return path_ + "." + std::string(name);
}

bool JsonObject::Has(const char* name) const {
  auto it = v_->FindMember(name);
  return it != v_->MemberEnd() && !it->value.IsNull();
}

Result<const rapidjson::Value*> JsonObject::Required(const char* name) const {
  auto it = v_->FindMember(name);
  if (it == v_->MemberEnd()) return Status::InvalidArgument(FieldPath(name) + ": missing");
  return &it->value;
}

Result<std::string> JsonObject::String(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsString()) {
    return Status::InvalidArgument(FieldPath(name) + ": must be a string, not " + TypeName(**v));
  }
  return std::string((*v)->GetString(), (*v)->GetStringLength());
}

Result<std::optional<std::string>> JsonObject::OptString(const char* name) const {
  if (!Has(name)) return std::optional<std::string>();
  auto s = String(name);
  if (!s.ok()) return s.status();
  return std::optional<std::string>(std::move(*s));
}

Result<int64_t> JsonObject::Int(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsInt64()) {
    return Status::InvalidArgument(FieldPath(name) + ": must be an integer, not " + TypeName(**v));
  }
  return (*v)->GetInt64();
}

Result<std::optional<int64_t>> JsonObject::OptInt(const char* name) const {
  if (!Has(name)) return std::optional<int64_t>();
  auto i = Int(name);
  if (!i.ok()) return i.status();
  return std::optional<int64_t>(*i);
}

Result<int64_t> JsonObject::IntIn(const char* name, int64_t min, int64_t max) const {
  auto i = Int(name);
  if (i.ok() && (*i < min || *i > max)) {
    return Status::InvalidArgument(FieldPath(name) + ": must be an integer from " + std::to_string(min) + " to " +
                                   std::to_string(max));
  }
  return i;
}

Result<std::optional<int64_t>> JsonObject::OptIntIn(const char* name, int64_t min, int64_t max) const {
  if (!Has(name)) return std::optional<int64_t>();
  auto i = IntIn(name, min, max);
  if (!i.ok()) return i.status();
  return std::optional<int64_t>(*i);
}

Result<bool> JsonObject::Bool(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsBool()) {
    return Status::InvalidArgument(FieldPath(name) + ": must be a boolean, not " + TypeName(**v));
  }
  return (*v)->GetBool();
}

Result<JsonObject> JsonObject::Object(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  return Of(**v, FieldPath(name));
}

Result<const rapidjson::Value*> JsonObject::Array(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsArray()) {
    return Status::InvalidArgument(FieldPath(name) + ": must be an array, not " + TypeName(**v));
  }
  return *v;
}

Result<std::string> JsonObject::Raw(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  return ToJsonText(**v);
}

std::optional<std::string> JsonObject::OptRaw(const char* name) const {
  auto it = v_->FindMember(name);
  if (it == v_->MemberEnd()) return std::nullopt;
  return ToJsonText(it->value);
}

Result<std::string> JsonObject::RawObject(const char* name) const {
  auto o = Object(name);
  if (!o.ok()) return o.status();
  return ToJsonText(*o->v_);
}

}  // namespace scimesh
