// A self-signed certificate for 127.0.0.1 (P-256, or RSA 2048; one hour), for
// TLS tests of the client and of the coordinator. Test-only code.
#pragma once

#include <string>

namespace scimesh::testing {

// Writes the certificate and its private key (PEM) to the two paths.
// `rsa`: an RSA key, with which a server could offer static-RSA (not
// forward-secret) suites.
bool WriteSelfSigned(const std::string& cert_path, const std::string& key_path, bool rsa = false);

}  // namespace scimesh::testing
