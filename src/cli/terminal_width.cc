// Text width from the terminal (terminal_width.h).
#include "cli/terminal_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace strata::cli {

size_t TextWidth(const std::string& path, size_t fallback) {
  if ((!path.empty() && path != "-") || !isatty(STDOUT_FILENO)) return fallback;
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n > 0 && n < 10000) return static_cast<size_t>(n);
  }
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return fallback;
}

}  // namespace strata::cli
