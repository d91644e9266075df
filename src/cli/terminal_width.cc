// Text width from --width, COLUMNS or the terminal (terminal_width.h).
#include "cli/terminal_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "reports/text_format.h"

namespace strata::cli {

std::optional<size_t> ColumnsVariable(const char* value) {
  if (value == nullptr) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || n < 1 || n >= 10000) return std::nullopt;
  return static_cast<size_t>(n);
}

void AddWidthOption(CLI::App* cmd, size_t& width) {
  cmd->add_option("--width", width,
                  "columns of the text report (default: COLUMNS when set, else the terminal's width, else 100; 100 "
                  "for a file written with -o)")
      ->check(CLI::Range(kMinTextWidth, size_t{10000}));
}

size_t TextWidth(const std::string& path, size_t requested, size_t fallback) {
  if (requested > 0) return requested;
  if (!path.empty() && path != "-") return fallback;
  if (auto columns = ColumnsVariable(std::getenv("COLUMNS"))) return *columns;
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return fallback;
}

}  // namespace strata::cli
