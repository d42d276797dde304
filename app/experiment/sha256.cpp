#include "app/experiment/sha256.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <openssl/evp.h>

namespace vsim::app {

std::string sha256_hex(const std::string& text)
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  std::string hex;
  for (unsigned int i = 0; i < len; ++i)
    hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

} // namespace vsim::app
