// RawConnection: a TCP connection to 127.0.0.1 driven byte by byte, for tests
// that behave as no HTTP library would (trickling heads, malformed framing,
// many idle or held connections). Not thread-safe; move-only.
#pragma once

#include <string>

namespace scimesh::coordinator::testing {

class RawConnection {
 public:
  // Connects (blocking, then non-blocking I/O) from `from` (a 127.x.y.z
  // address; default the kernel's choice); ok() says whether it did.
  explicit RawConnection(int port, const std::string& from = "");
  ~RawConnection();
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;
  RawConnection(const RawConnection&) = delete;

  bool ok() const { return fd_ >= 0; }
  // Sends all of `bytes`; false once the peer has closed or reset.
  bool Send(const std::string& bytes);
  // What has arrived, without waiting; sets closed() on EOF or reset.
  std::string Poll();
  // Reads until the peer closes or `timeout_ms` passes without a byte.
  std::string ReadUntilClosed(int timeout_ms);
  // Reads until a whole HTTP response head and its Content-Length body have
  // arrived (counting `already`, bytes Poll() returned), the peer closes, or
  // `timeout_ms` passes. Returns `already` and what followed.
  std::string ReadResponse(int timeout_ms, std::string already = "");
  bool closed() const { return closed_; }
  void Close();

 private:
  int fd_ = -1;
  bool closed_ = false;
};

// "POST PATH HTTP/1.1" with Host, Authorization and Content-Length, and `body`.
std::string PostRequest(const std::string& path, const std::string& token, const std::string& body);

}  // namespace scimesh::coordinator::testing
