// One list of a JSON object's members serves reading and writing it.
//
// A type's members are listed once, in a generic lambda over the direction
// (`m`) and the value (`r`, const when writing):
//
//   constexpr auto kRunStatusMembers = [](auto& m, auto& r) {
//     m.String("run_id", r.run_id, CheckRunId);
//     m.String("status", r.status);
//   };
//
// ReadMembers<RunStatus>(object, kRunStatusMembers) reads them with every
// rule and range (MemberReader keeps the first refusal, a Status naming the
// field's path, and skips the rest); WriteMembers(w, status,
// kRunStatusMembers) writes them in the same order (MemberWriter ignores
// rules, ranges and Check: what it writes came from this process). So a wire
// type's reader and writer cannot drift apart. A Check that reads or changes
// members takes `const auto&`, so that the writer never instantiates it.
//
// Stateless apart from the reader's status; thread-safe per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/json_io.h"
#include "protocol/util/status.h"

namespace scimesh {

// A rule a string member must keep (CheckIdentifier, CheckRunId, ...): OK, or
// a refusal naming `field`.
using StringRule = Status (*)(std::string_view value, std::string_view field);

// How an unset optional member is written: as null, or not at all.
enum class Unset { kNull, kOmit };

class MemberReader;
class MemberWriter;

template <typename T, typename Members>
Result<T> ReadMembers(const JsonObject& o, const Members& members);

template <typename T, typename Members>
void WriteMembers(JsonWriter& w, const T& value, const Members& members);

class MemberReader {
 public:
  explicit MemberReader(const JsonObject& o) : o_(o) {}
  const Status& status() const { return status_; }

  void String(const char* name, std::string& v, StringRule rule = nullptr) {
    if (Take(o_.String(name), v)) Keep(name, v, rule);
  }
  void StringIn(const char* name, std::string& v, size_t min, size_t max, StringRule rule = nullptr) {
    if (Take(o_.StringIn(name, min, max), v)) Keep(name, v, rule);
  }
  void OptString(const char* name, std::optional<std::string>& v, Unset = Unset::kNull,
                 StringRule rule = nullptr) {
    if (Take(o_.OptString(name), v) && v) Keep(name, *v, rule);
  }
  // A string where absent (or null) reads as `absent`; always written.
  void OptStringOr(const char* name, std::string& v, const char* absent) {
    std::optional<std::string> read;
    if (Take(o_.OptString(name), read)) v = read.value_or(absent);
  }
  void Int(const char* name, int64_t& v) { Take(o_.Int(name), v); }
  // Into any integer type that holds min..max.
  template <typename I>
  void IntIn(const char* name, I& v, int64_t min, int64_t max) {
    int64_t read = 0;
    if (Take(o_.IntIn(name, min, max), read)) v = static_cast<I>(read);
  }
  // An integer from `min` to `max` where absent (or null) reads as `absent`;
  // written always, or (Unset::kOmit) only when it is not `absent`.
  void IntInOr(const char* name, int64_t& v, int64_t min, int64_t max, int64_t absent, Unset = Unset::kNull) {
    std::optional<int64_t> read;
    if (Take(o_.OptIntIn(name, min, max), read)) v = read.value_or(absent);
  }
  // A string of `min` to `max` bytes keeping `rule`, where absent (or null)
  // reads as empty; not written when empty.
  void StringOrEmpty(const char* name, std::string& v, size_t min, size_t max, StringRule rule = nullptr) {
    std::optional<std::string> read;
    if (!Take(o_.OptStringIn(name, min, max), read)) return;
    v = read.value_or("");
    if (!v.empty()) Keep(name, v, rule);
  }
  void OptInt(const char* name, std::optional<int64_t>& v, Unset = Unset::kNull) { Take(o_.OptInt(name), v); }
  void OptIntIn(const char* name, std::optional<int64_t>& v, int64_t min, int64_t max, Unset = Unset::kNull) {
    Take(o_.OptIntIn(name, min, max), v);
  }
  void Bool(const char* name, bool& v) { Take(o_.Bool(name), v); }
  // A string of any length, cut to at most `max` bytes (at a UTF-8 boundary).
  void StringCut(const char* name, std::string& v, size_t max) {
    if (Take(o_.String(name), v)) v = TruncateUtf8(v, max);
  }
  // An enum by its name: `parse(text)` is the value or nullopt, refused with `why`.
  template <typename E, typename Parse, typename Name>
  void Enum(const char* name, E& v, Parse&& parse, Name&&, const char* why) {
    std::string text;
    if (!Take(o_.String(name), text)) return;
    auto parsed = parse(text);
    if (parsed) {
      v = *parsed;
    } else {
      status_ = Status::InvalidField(o_.FieldPath(name), why);
    }
  }
  // The same, where absent (or null) leaves it unset.
  template <typename E, typename Parse, typename Name>
  void OptEnum(const char* name, std::optional<E>& v, Parse&& parse, Name&& name_of, const char* why,
               Unset = Unset::kOmit) {
    if (!status_.ok() || !o_.Has(name)) return;
    E value{};
    Enum(name, value, parse, name_of, why);
    if (status_.ok()) v = value;
  }
  // Any JSON value as compact text; required (it may be null).
  void Raw(const char* name, std::string& v) { Take(o_.Raw(name), v); }
  // Any JSON value as compact text; absent reads as `absent`.
  void RawOr(const char* name, std::string& v, const char* absent) {
    if (status_.ok()) v = o_.OptRaw(name).value_or(absent);
  }
  // Any JSON value as compact text; absent (or null) leaves it unset, and unset is not written.
  void OptRaw(const char* name, std::optional<std::string>& v) {
    if (status_.ok() && o_.Has(name)) v = o_.OptRaw(name);
  }
  // An object as compact text; required.
  void RawObject(const char* name, std::string& v) { Take(o_.RawObject(name), v); }
  // An object as compact text; absent (or null) leaves it unset, and unset is not written.
  void OptRawObject(const char* name, std::optional<std::string>& v) {
    if (!status_.ok() || !o_.Has(name)) return;
    std::string text;
    if (Take(o_.RawObject(name), text)) v = std::move(text);
  }
  // An array of at most `max` objects, each read by `members`; required.
  template <typename T, typename Members>
  void Objects(const char* name, std::vector<T>& v, const Members& members, size_t max = SIZE_MAX) {
    if (!status_.ok()) return;
    status_ = o_.Objects(name, max, &v, [&](const JsonObject& e) { return ReadMembers<T>(e, members); });
  }
  // The same, where absent (or null) reads as no elements; always written.
  template <typename T, typename Members>
  void OptObjects(const char* name, std::vector<T>& v, const Members& members, size_t max = SIZE_MAX) {
    if (status_.ok() && o_.Has(name)) Objects(name, v, members, max);
  }
  // A nested object read by `members` into `v` as it is; required.
  template <typename T, typename Members>
  void Object(const char* name, T& v, const Members& members) {
    if (!status_.ok()) return;
    auto nested = o_.Object(name);
    if (!nested.ok()) {
      status_ = nested.status();
      return;
    }
    MemberReader reader(*nested);
    members(reader, v);
    status_ = reader.status();
  }
  // A nested object read by `members` into `v`; absent (or null) keeps `v`
  // as it is (its defaults); always written.
  template <typename T, typename Members>
  void ObjectOrDefault(const char* name, T& v, const Members& members) {
    if (status_.ok() && o_.Has(name)) Object(name, v, members);
  }
  // A nested object read by `members`; absent (or null) leaves it unset.
  template <typename T, typename Members>
  void OptObject(const char* name, std::optional<T>& v, const Members& members, Unset = Unset::kNull) {
    if (!status_.ok() || !o_.Has(name)) return;
    T nested{};
    Object(name, nested, members);
    if (status_.ok()) v = std::move(nested);
  }
  // An array of at most `max` names (strings), each turned into a T by
  // `parse(text)` (nullopt: refused with `why`); absent (or null) reads as
  // none, and none is written as [].
  template <typename T, typename Parse, typename NameOf>
  void Names(const char* name, std::vector<T>& v, size_t max, Parse&& parse, NameOf&&, const char* why) {
    if (!status_.ok() || !o_.Has(name)) return;
    auto array = o_.ArrayIn(name, 0, max);
    if (!array.ok()) {
      status_ = array.status();
      return;
    }
    for (rapidjson::SizeType i = 0; i < (*array)->Size(); ++i) {
      const auto& e = (**array)[i];
      std::optional<T> item;
      if (e.IsString()) item = parse(std::string_view(e.GetString(), e.GetStringLength()));
      if (!item) {
        status_ = Status::InvalidField(ElementPath(o_.FieldPath(name), i), why);
        return;
      }
      v.push_back(std::move(*item));
    }
  }
  // The same, where absent (or null) leaves it unset, and unset is not written.
  template <typename T, typename Parse, typename NameOf>
  void Names(const char* name, std::optional<std::vector<T>>& v, size_t max, Parse&& parse, NameOf&& name_of,
             const char* why) {
    if (!status_.ok() || !o_.Has(name)) return;
    std::vector<T> items;
    Names(name, items, max, parse, name_of, why);
    if (status_.ok()) v = std::move(items);
  }
  // A rule over members already read: `check(object)` is OK or the refusal.
  template <typename Rule>
  void Check(Rule&& rule) {
    if (status_.ok()) status_ = rule(o_);
  }

 private:
  template <typename T>
  bool Take(Result<T> r, T& v) {
    if (!status_.ok()) return false;
    if (!r.ok()) {
      status_ = r.status();
      return false;
    }
    v = std::move(*r);
    return true;
  }
  void Keep(const char* name, std::string_view v, StringRule rule) {
    if (rule != nullptr && status_.ok()) status_ = rule(v, o_.FieldPath(name));
  }

  const JsonObject& o_;
  Status status_ = Status::Ok();
};

class MemberWriter {
 public:
  explicit MemberWriter(JsonWriter& w) : w_(w) {}

  void String(const char* name, const std::string& v, StringRule = nullptr) { WriteString(w_, name, v); }
  void StringIn(const char* name, const std::string& v, size_t, size_t, StringRule = nullptr) {
    WriteString(w_, name, v);
  }
  void OptString(const char* name, const std::optional<std::string>& v, Unset unset = Unset::kNull,
                 StringRule = nullptr) {
    if (v || unset == Unset::kNull) WriteOptString(w_, name, v);
  }
  void OptStringOr(const char* name, const std::string& v, const char*) { WriteString(w_, name, v); }
  void Int(const char* name, int64_t v) { WriteInt(w_, name, v); }
  template <typename I>
  void IntIn(const char* name, I v, int64_t, int64_t) {
    WriteInt(w_, name, static_cast<int64_t>(v));
  }
  void IntInOr(const char* name, int64_t v, int64_t, int64_t, int64_t absent, Unset unset = Unset::kNull) {
    if (v != absent || unset == Unset::kNull) WriteInt(w_, name, v);
  }
  void StringOrEmpty(const char* name, const std::string& v, size_t, size_t, StringRule = nullptr) {
    if (!v.empty()) WriteString(w_, name, v);
  }
  void OptInt(const char* name, std::optional<int64_t> v, Unset unset = Unset::kNull) {
    if (v || unset == Unset::kNull) WriteOptInt(w_, name, v);
  }
  void OptIntIn(const char* name, std::optional<int64_t> v, int64_t, int64_t, Unset unset = Unset::kNull) {
    OptInt(name, v, unset);
  }
  void Bool(const char* name, bool v) { WriteBool(w_, name, v); }
  void StringCut(const char* name, const std::string& v, size_t) { WriteString(w_, name, v); }
  template <typename E, typename Parse, typename Name>
  void Enum(const char* name, E v, Parse&&, Name&& name_of, const char*) {
    WriteString(w_, name, name_of(v));
  }
  template <typename E, typename Parse, typename Name>
  void OptEnum(const char* name, const std::optional<E>& v, Parse&& parse, Name&& name_of, const char* why,
               Unset unset = Unset::kOmit) {
    if (v) {
      Enum(name, *v, parse, name_of, why);
    } else if (unset == Unset::kNull) {
      w_.Key(name);
      w_.Null();
    }
  }
  void Raw(const char* name, const std::string& v) { WriteRaw(w_, name, v); }
  void RawOr(const char* name, const std::string& v, const char*) { WriteRaw(w_, name, v); }
  void OptRaw(const char* name, const std::optional<std::string>& v) {
    if (v) WriteRaw(w_, name, *v);
  }
  void RawObject(const char* name, const std::string& v) { WriteRaw(w_, name, v); }
  void OptRawObject(const char* name, const std::optional<std::string>& v) {
    if (v) WriteRaw(w_, name, *v);
  }
  template <typename T, typename Members>
  void Objects(const char* name, const std::vector<T>& v, const Members& members, size_t = SIZE_MAX) {
    WriteArray(w_, name, v, [&](JsonWriter& w, const T& x) { WriteMembers(w, x, members); });
  }
  template <typename T, typename Members>
  void OptObjects(const char* name, const std::vector<T>& v, const Members& members, size_t max = SIZE_MAX) {
    Objects(name, v, members, max);
  }
  template <typename T, typename Members>
  void Object(const char* name, const T& v, const Members& members) {
    w_.Key(name);
    WriteMembers(w_, v, members);
  }
  template <typename T, typename Members>
  void ObjectOrDefault(const char* name, const T& v, const Members& members) {
    Object(name, v, members);
  }
  template <typename T, typename Members>
  void OptObject(const char* name, const std::optional<T>& v, const Members& members, Unset unset = Unset::kNull) {
    if (v) {
      Object(name, *v, members);
    } else if (unset == Unset::kNull) {
      w_.Key(name);
      w_.Null();
    }
  }
  template <typename T, typename Parse, typename NameOf>
  void Names(const char* name, const std::vector<T>& v, size_t, Parse&&, NameOf&& name_of, const char*) {
    w_.Key(name);
    w_.StartArray();
    for (const T& x : v) {
      std::string_view text = name_of(x);
      w_.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    }
    w_.EndArray();
  }
  template <typename T, typename Parse, typename NameOf>
  void Names(const char* name, const std::optional<std::vector<T>>& v, size_t max, Parse&& parse, NameOf&& name_of,
             const char* why) {
    if (v) Names(name, *v, max, parse, name_of, why);
  }
  template <typename Rule>
  void Check(Rule&&) {}

 private:
  JsonWriter& w_;
};

// Reads a T from `o` by `members`: the first refusal, or the value.
template <typename T, typename Members>
Result<T> ReadMembers(const JsonObject& o, const Members& members) {
  T value{};
  MemberReader reader(o);
  members(reader, value);
  if (!reader.status().ok()) return reader.status();
  return value;
}

// Writes `value` as one JSON object with the members `members` lists.
template <typename T, typename Members>
void WriteMembers(JsonWriter& w, const T& value, const Members& members) {
  w.StartObject();
  MemberWriter writer(w);
  members(writer, value);
  w.EndObject();
}

// The compact text of `value` as one JSON object (WriteMembers).
template <typename T, typename Members>
std::string MembersText(const T& value, const Members& members) {
  return ObjectText([&](JsonWriter& w) {
    MemberWriter writer(w);
    members(writer, value);
  });
}

// Parses `text` as one object (ReadObjectText's refusals) and reads a T by `members`.
template <typename T, typename Members>
Result<T> ParseMembers(std::string_view text, std::string_view what, const JsonLimits& limits,
                       const Members& members) {
  return ReadObjectText(text, what, limits, [&](const JsonObject& o) { return ReadMembers<T>(o, members); });
}

}  // namespace scimesh
