// Limited JSON parsing (a depth- and length-checking SAX filter in front of the
// RapidJSON document builder) and the typed field reader.
#include "coordinator/json_input.h"

#include <string>
#include <unordered_set>
#include <vector>

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include "protocol/json_io.h"
#include "protocol/json_number.h"

namespace scimesh::coordinator {
namespace {

// Builds the document (numbers read exactly) while enforcing the limits.
class LimitFilter : public ExactDocumentBuilder {
 public:
  LimitFilter(rapidjson::Document& doc, const JsonLimits& limits) : ExactDocumentBuilder(doc), limits_(limits) {}

  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return CheckString(s, n) && doc_.String(s, n, copy);
  }
  // A key that repeats in one object is refused: which of the two a reader
  // takes is up to the reader, and a definition's canonical text (keys
  // sorted) would not be one text (found by fuzz/coordinator_requests_fuzzer).
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (!CheckString(s, n)) return false;
    if (!keys_.back().emplace(s, n).second) {
      why_ = "a key repeats in an object";
      return false;
    }
    return doc_.Key(s, n, copy);
  }
  bool StartObject() {
    if (!Enter()) return false;
    keys_.emplace_back();
    return doc_.StartObject();
  }
  bool EndObject(rapidjson::SizeType n) {
    --depth_;
    keys_.pop_back();
    return doc_.EndObject(n);
  }
  bool StartArray() { return Enter() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { --depth_; return doc_.EndArray(n); }

  const char* violation() const { return why_; }

 private:
  bool Enter() {
    if (++depth_ > limits_.max_depth) {
      why_ = "nested deeper than the limit of 64";
      return false;
    }
    return true;
  }
  bool CheckString(const char* s, rapidjson::SizeType n) {
    if (n > limits_.max_string_bytes) {
      why_ = "a string is longer than the limit of 64 KiB";
      return false;
    }
    // A lone surrogate escape ("\udc00") decodes to bytes that are not UTF-8:
    // stored, they could never be read back (see protocol/json_io.h).
    if (!IsWellFormedUtf8(std::string_view(s, n))) {
      why_ = "a string is not valid UTF-8 (a lone surrogate escape?)";
      return false;
    }
    return true;
  }

  const JsonLimits& limits_;
  size_t depth_ = 0;
  std::vector<std::unordered_set<std::string>> keys_;  // of each open object
  const char* why_ = nullptr;
};

// Populate() wants a generator: it runs the reader into the document handler.
struct LimitedParse {
  LimitedParse(const char* text, const JsonLimits& l) : stream(text), limits(l) {}

  rapidjson::StringStream stream;
  const JsonLimits& limits;
  rapidjson::Reader reader;
  const char* violation = nullptr;

  bool operator()(rapidjson::Document& doc) {
    LimitFilter filter(doc, limits);
    // Numbers as text: LimitFilter::RawNumber reads them.
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                                rapidjson::kParseNumbersAsStringsFlag;
    bool ok = !reader.Parse<kFlags>(stream, filter).IsError();
    violation = filter.violation();
    return ok;
  }
};

const char* TypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "a boolean";
    case rapidjson::kObjectType: return "an object";
    case rapidjson::kArrayType: return "an array";
    case rapidjson::kStringType: return "a string";
    case rapidjson::kNumberType: return "a number";
  }
  return "unknown";
}

}  // namespace

ApiResult<std::unique_ptr<rapidjson::Document>> ParseJson(std::string_view text,
                                                          const JsonLimits& limits) {
  // RapidJSON's StringStream stops at NUL; a body with one is malformed anyway.
  if (text.find('\0') != std::string_view::npos) {
    return ApiError::BadRequest("", "malformed JSON: the body contains a NUL byte");
  }
  // NUL-terminated for the stream, and padded: RapidJSON's UTF-8 check takes
  // every continuation byte a lead byte announces, past the terminator too,
  // so a body ending in a cut sequence ("\xF3") would be read beyond its end.
  std::string copy(text);
  copy.append(3, '\0');
  auto doc = std::make_unique<rapidjson::Document>();
  LimitedParse parse(copy.c_str(), limits);
  doc->Populate(parse);
  if (parse.reader.HasParseError()) {
    if (parse.violation != nullptr) return ApiError::BadRequest("", parse.violation);
    return ApiError::BadRequest(
        "", std::string("malformed JSON at offset ") + std::to_string(parse.reader.GetErrorOffset()) +
                ": " + rapidjson::GetParseError_En(parse.reader.GetParseErrorCode()));
  }
  return doc;
}

void InputProblems::Add(std::string field, std::string why) {
  if (!first_) first_.emplace(std::move(field), std::move(why));
}

FieldReader::FieldReader(const rapidjson::Value& object, std::string path, InputProblems& problems)
    : object_(&object), path_(std::move(path)), problems_(problems) {
  if (!object.IsObject()) {
    problems_.Add(path_, std::string("must be an object, not ") + TypeName(object));
    object_ = nullptr;
  }
}

std::string FieldReader::PathOf(std::string_view name) const {
  if (path_.empty()) return std::string(name);
  std::string p = path_;
  p += '.';
  p += name;
  return p;
}

void FieldReader::Fail(std::string_view name, std::string why) { problems_.Add(PathOf(name), std::move(why)); }

bool FieldReader::Has(const char* name) const {
  if (object_ == nullptr) return false;
  auto it = object_->FindMember(name);
  return it != object_->MemberEnd() && !it->value.IsNull();
}

const rapidjson::Value* FieldReader::Find(const char* name, Need need) {
  if (object_ == nullptr) return nullptr;
  auto it = object_->FindMember(name);
  if (it == object_->MemberEnd() || it->value.IsNull()) {
    if (need == Need::kRequired) Fail(name, "is required");
    return nullptr;
  }
  return &it->value;
}

std::optional<std::string> FieldReader::String(const char* name, Need need, size_t min_len,
                                               size_t max_len) {
  const rapidjson::Value* v = Find(name, need);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) {
    Fail(name, std::string("must be a string, not ") + TypeName(*v));
    return std::nullopt;
  }
  size_t n = v->GetStringLength();
  if (n < min_len || n > max_len) {
    Fail(name, "must be " + std::to_string(min_len) + " to " + std::to_string(max_len) + " characters");
    return std::nullopt;
  }
  return std::string(v->GetString(), n);
}

std::optional<int64_t> FieldReader::Int(const char* name, Need need, int64_t min, int64_t max) {
  const rapidjson::Value* v = Find(name, need);
  if (v == nullptr) return std::nullopt;
  if (!v->IsInt64()) {
    Fail(name, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  int64_t i = v->GetInt64();
  if (i < min || i > max) {
    Fail(name, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return i;
}

const rapidjson::Value* FieldReader::Object(const char* name, Need need) {
  const rapidjson::Value* v = Find(name, need);
  if (v != nullptr && !v->IsObject()) {
    Fail(name, std::string("must be an object, not ") + TypeName(*v));
    return nullptr;
  }
  return v;
}

const rapidjson::Value* FieldReader::Array(const char* name, Need need, size_t min_size, size_t max_size) {
  const rapidjson::Value* v = Find(name, need);
  if (v == nullptr) return nullptr;
  if (!v->IsArray()) {
    Fail(name, std::string("must be an array, not ") + TypeName(*v));
    return nullptr;
  }
  if (v->Size() < min_size || v->Size() > max_size) {
    Fail(name, "must hold " + std::to_string(min_size) + " to " + std::to_string(max_size) + " elements");
    return nullptr;
  }
  return v;
}

const rapidjson::Value* FieldReader::Any(const char* name, Need need) { return Find(name, need); }

}  // namespace scimesh::coordinator
