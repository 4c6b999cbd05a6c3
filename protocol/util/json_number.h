// JsonNumber: a JSON number read from its text exactly — integers as
// integers, others as the nearest double — so that what a peer wrote reads
// back the same when written again. RapidJSON 1.1.0's own number readers are
// one ulp off (1e-81) or, at full precision, undefined on a zero significand
// (0e-74); both sides parse with kParseNumbersAsStringsFlag and hand the text
// here (fuzz findings, see docs/development.md). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include <rapidjson/document.h>

namespace scimesh {

struct JsonNumber {
  enum Kind { kInt64, kUint64, kDouble } kind = kDouble;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;

  // Hands the number to a RapidJSON SAX handler (a Document builds the same
  // value RapidJSON would: the width flags follow from the value).
  template <typename Handler>
  bool SendTo(Handler& handler) const {
    switch (kind) {
      case kInt64: return handler.Int64(i);
      case kUint64: return handler.Uint64(u);
      case kDouble: break;
    }
    return handler.Double(d);
  }
};

// Reads `text`, a number as the JSON grammar allows it (RapidJSON has checked
// the syntax). Returns nullptr and sets `out`, or why not: a magnitude past
// the largest double (underflow becomes zero, as RapidJSON makes it).
const char* ReadJsonNumber(std::string_view text, JsonNumber& out);

// A RapidJSON SAX handler (for a reader run with kParseNumbersAsStringsFlag)
// that builds `doc` as RapidJSON would, numbers read with ReadJsonNumber.
// A parser that checks more derives from it and hides the events it checks
// (the reader calls them on the derived type). Borrows `doc`.
class ExactDocumentBuilder {
 public:
  explicit ExactDocumentBuilder(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    JsonNumber number;
    why_ = ReadJsonNumber(std::string_view(s, n), number);
    return why_ == nullptr && number.SendTo(doc_);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return doc_.EndObject(n); }
  bool StartArray() { return doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return doc_.EndArray(n); }

  // Why a handler event refused the text (the reader then stops), or nullptr.
  const char* why() const { return why_; }

 protected:
  rapidjson::Document& doc_;
  const char* why_ = nullptr;
};

}  // namespace scimesh
