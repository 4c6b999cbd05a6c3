// Depth-limited JSON parsing and typed field access for the wire parsers.
#include "protocol/util/json_io.h"

#include <unordered_set>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "protocol/util/json_number.h"

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

// What is wrong with the strings and keys under `v`, or "": each is
// well-formed UTF-8 and within the limit, and no key repeats in an object (a
// message must mean one thing to both sides). Depth is bounded by the
// limits, checked before parsing.
std::string StringProblem(const rapidjson::Value& v, size_t max_bytes) {
  if (v.IsString()) {
    if (v.GetStringLength() > max_bytes) {
      return "a string is longer than the limit of " +
             (max_bytes % 1024 == 0 ? std::to_string(max_bytes / 1024) + " KiB" : std::to_string(max_bytes) + " bytes");
    }
    return IsWellFormedUtf8(std::string_view(v.GetString(), v.GetStringLength()))
               ? ""
               : "a string is not valid UTF-8 (a lone surrogate escape?)";
  }
  if (v.IsArray()) {
    for (const auto& e : v.GetArray()) {
      if (auto why = StringProblem(e, max_bytes); !why.empty()) return why;
    }
  } else if (v.IsObject()) {
    std::unordered_set<std::string_view> keys;
    for (const auto& m : v.GetObject()) {
      if (auto why = StringProblem(m.name, max_bytes); !why.empty()) return why;
      if (!keys.emplace(m.name.GetString(), m.name.GetStringLength()).second) return "a key repeats in an object";
      if (auto why = StringProblem(m.value, max_bytes); !why.empty()) return why;
    }
  }
  return "";
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

Result<rapidjson::Document> ParseJson(std::string_view text, std::string_view what, const JsonLimits& limits) {
  return ParseJson(text, what, limits, nullptr);
}

Result<rapidjson::Document> ParseJson(std::string_view text, std::string_view what, const JsonLimits& limits,
                                      std::optional<JsonSyntaxError>* syntax) {
  auto refuse = [&](std::string why) { return Status::InvalidField("", std::move(why)).WithContext(what); };
  // The reader takes a NUL for the end of the text: what follows would be ignored.
  if (text.find('\0') != std::string_view::npos) return refuse("malformed JSON: the text contains a NUL byte");
  if (MaxDepth(text) > limits.max_depth) {
    return refuse("nested deeper than the limit of " + std::to_string(limits.max_depth));
  }
  rapidjson::Document doc;
  ExactParse parse{text, {}, nullptr};
  doc.Populate(parse);
  if (parse.reader.HasParseError()) {
    if (parse.why != nullptr) return refuse(parse.why);
    if (syntax != nullptr) {
      *syntax = JsonSyntaxError{parse.reader.GetErrorOffset(), rapidjson::GetParseError_En(parse.reader.GetParseErrorCode())};
    }
    return refuse("malformed JSON at offset " + std::to_string(parse.reader.GetErrorOffset()) + ": " +
                  rapidjson::GetParseError_En(parse.reader.GetParseErrorCode()));
  }
  if (auto why = StringProblem(doc, limits.max_string_bytes); !why.empty()) return refuse(std::move(why));
  return doc;
}

std::string TruncateUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of a sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
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

void WriteRaw(JsonWriter& w, std::string_view key, std::string_view json_text) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  WriteRawJson(w, json_text);
}

void WriteOptString(JsonWriter& w, std::string_view key, const std::optional<std::string>& value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  if (value) w.String(value->data(), static_cast<rapidjson::SizeType>(value->size()));
  else w.Null();
}

void WriteInt(JsonWriter& w, std::string_view key, int64_t value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.Int64(value);
}

void WriteBool(JsonWriter& w, std::string_view key, bool value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.Bool(value);
}

void WriteDouble(JsonWriter& w, std::string_view key, double value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.Double(value);
}

void WriteOptDouble(JsonWriter& w, std::string_view key, std::optional<double> value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  if (value) w.Double(*value);
  else w.Null();
}

void WriteOptInt(JsonWriter& w, std::string_view key, std::optional<int64_t> value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  if (value) w.Int64(*value);
  else w.Null();
}

std::string ElementPath(std::string_view array_path, size_t index) {
  return std::string(array_path) + "[" + std::to_string(index) + "]";
}

Result<JsonObject> JsonObject::Of(const rapidjson::Value& value, std::string path) {
  if (!value.IsObject()) return Status::InvalidField(std::move(path), std::string("must be an object, not ") + TypeName(value));
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

Status JsonObject::Refuse(std::string_view name, std::string why) const {
  return Status::InvalidField(FieldPath(name), std::move(why));
}

Result<const rapidjson::Value*> JsonObject::Required(const char* name) const {
  if (!Has(name)) return Refuse(name, "is required");
  return &v_->FindMember(name)->value;
}

Result<std::string> JsonObject::String(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsString()) {
    return Refuse(name, std::string("must be a string, not ") + TypeName(**v));
  }
  return std::string((*v)->GetString(), (*v)->GetStringLength());
}

namespace {

// A field read that is absent or null as nullopt, else `read()`'s value or error.
template <typename T, typename Read>
Result<std::optional<T>> Optional(bool present, Read&& read) {
  if (!present) return std::optional<T>();
  Result<T> value = read();
  if (!value.ok()) return value.status();
  return std::optional<T>(std::move(*value));
}

}  // namespace

Result<std::optional<std::string>> JsonObject::OptString(const char* name) const {
  return Optional<std::string>(Has(name), [&] { return String(name); });
}

Result<int64_t> JsonObject::Int(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsInt64()) {
    return Refuse(name, std::string("must be an integer, not ") + TypeName(**v));
  }
  return (*v)->GetInt64();
}

Result<std::optional<int64_t>> JsonObject::OptInt(const char* name) const {
  return Optional<int64_t>(Has(name), [&] { return Int(name); });
}

Result<int64_t> JsonObject::IntIn(const char* name, int64_t min, int64_t max) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsInt64() || (*v)->GetInt64() < min || (*v)->GetInt64() > max) {
    return Refuse(name, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return (*v)->GetInt64();
}

Result<std::optional<int64_t>> JsonObject::OptIntIn(const char* name, int64_t min, int64_t max) const {
  return Optional<int64_t>(Has(name), [&] { return IntIn(name, min, max); });
}

Result<std::string> JsonObject::StringIn(const char* name, size_t min, size_t max) const {
  auto s = String(name);
  if (s.ok() && (s->size() < min || s->size() > max)) {
    return Refuse(name, "must be " + std::to_string(min) + " to " + std::to_string(max) + " characters");
  }
  return s;
}

Result<std::optional<std::string>> JsonObject::OptStringIn(const char* name, size_t min, size_t max) const {
  return Optional<std::string>(Has(name), [&] { return StringIn(name, min, max); });
}

Result<bool> JsonObject::Bool(const char* name) const {
  auto v = Required(name);
  if (!v.ok()) return v.status();
  if (!(*v)->IsBool()) {
    return Refuse(name, std::string("must be a boolean, not ") + TypeName(**v));
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
    return Refuse(name, std::string("must be an array, not ") + TypeName(**v));
  }
  return *v;
}

Result<const rapidjson::Value*> JsonObject::ArrayIn(const char* name, size_t min, size_t max) const {
  auto a = Array(name);
  if (a.ok() && ((*a)->Size() < min || (*a)->Size() > max)) {
    return Refuse(name, "must hold " + std::to_string(min) + " to " + std::to_string(max) + " elements");
  }
  return a;
}

Result<std::string> JsonObject::Raw(const char* name) const {
  auto it = v_->FindMember(name);
  if (it == v_->MemberEnd()) return Refuse(name, "is required");
  return ToJsonText(it->value);
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
