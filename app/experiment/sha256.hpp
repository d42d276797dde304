// Lower-case hex SHA-256 of text (config hashes, point keys), by OpenSSL.
#pragma once

#include <string>

namespace vsim::app {

std::string sha256_hex(const std::string& text);

} // namespace vsim::app
