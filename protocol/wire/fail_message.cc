// Sanitising messages before they leave the worker.
#include "protocol/wire/fail_message.h"

#include "protocol/util/log.h"

namespace scimesh {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool OpensPath(char c) { return c == '\'' || c == '"' || c == '(' || c == '=' || c == '[' || c == '<' || c == ','; }
bool EndsPath(char c) {
  return c == '\'' || c == '"' || c == ')' || c == ']' || c == '>' || c == ',' || c == ';' || c == ':';
}

// The last non-empty component of a path ("/a/b/" → "b").
std::string_view Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string StripWord(std::string_view word) {
  if (word.substr(0, 7) == "file://") return std::string(Basename(word.substr(7)));
  if (word.find("://") != std::string_view::npos) return std::string(word);  // a URL: no local path
  std::string out;
  size_t i = 0;
  while (i < word.size()) {
    const bool at_start = i == 0 || OpensPath(word[i - 1]);
    const bool home = word[i] == '~' && i + 1 < word.size() && word[i + 1] == '/';
    if (at_start && (word[i] == '/' || home)) {
      size_t end = i;
      while (end < word.size() && !EndsPath(word[end])) ++end;
      out += Basename(word.substr(i, end - i));
      i = end;
      continue;
    }
    out += word[i++];
  }
  return out;
}

// Length of the UTF-8 sequence starting at s[i], or 0 if invalid there.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

}  // namespace

std::string StripDirectories(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (IsSpace(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && !IsSpace(text[end])) ++end;
    out += StripWord(text.substr(i, end - i));
    i = end;
  }
  return out;
}

std::string SanitizeFailMessage(std::string_view message) {
  auto eol = message.find_first_of("\r\n");
  if (eol != std::string_view::npos) message = message.substr(0, eol);
  const std::string stripped = log::Redact(StripDirectories(message));
  std::string out;
  for (size_t i = 0; i < stripped.size();) {
    size_t n = Utf8Length(stripped, i);
    const bool control = n == 1 && static_cast<unsigned char>(stripped[i]) < 0x20 && stripped[i] != '\t';
    if (n == 0 || control) {
      n = 1;
      if (out.size() + 1 > kMaxFailMessageBytes) break;
      out += '?';
    } else {
      if (out.size() + n > kMaxFailMessageBytes) break;
      out.append(stripped, i, n);
    }
    i += n;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out.empty() ? std::string("(no message)") : out;
}

}  // namespace scimesh
