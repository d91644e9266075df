// Usage errors of the command line (see usage_errors.h).
#include "cli/usage_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cli/parse_error_wording.h"

namespace strata::cli {

namespace {

/// A name is near another when at most a third of it (and at least 2 characters) differs.
bool Near(std::string_view given, size_t distance) { return distance <= std::max<size_t>(2, given.size() / 3); }

/// The subcommand named on the command line (the first argument that names one), or nullptr.
const CLI::App* ChosenSubcommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == argv[i]) return sub;
  return nullptr;
}

/// The long option of `app` (or of strata itself) nearest `given` ("--formt" -> "--format"), or "".
std::string NearestOption(const CLI::App& app, const CLI::App* sub, std::string_view given) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const CLI::App* a : {sub, &app}) {
    if (a == nullptr) continue;
    for (const CLI::Option* o : a->get_options())
      for (const std::string& name : o->get_lnames()) {
        const std::string option = "--" + name;
        const size_t d = EditDistance(given, option);
        if (d < best_distance) best_distance = d, best = option;
      }
  }
  return Near(given, best_distance) ? best : std::string();
}

/// The arguments CLI11 did not expect, from its sentence ("...not expected: --formt x").
std::vector<std::string> UnexpectedArguments(std::string_view what) {
  std::vector<std::string> out;
  const size_t colon = what.find(": ");
  if (colon == std::string_view::npos) return out;
  std::string_view rest = what.substr(colon + 2);
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    const std::string_view word = rest.substr(0, space);
    if (!word.empty()) out.emplace_back(word);
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> UnknownSubcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string_view given = argv[1];
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == given) return std::nullopt;
    const size_t d = EditDistance(given, sub->get_name());
    if (d < best_distance) best_distance = d, best = sub->get_name();
  }
  std::string message = fmt::format("strata: unknown command '{}'", given);
  if (Near(given, best_distance)) message += fmt::format("; did you mean '{}'?", best);
  return message + " (see strata --help)";
}

std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  const CLI::App* sub = ChosenSubcommand(app, argc, argv);
  std::string message = WordParseError(app, sub, error);
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    for (const std::string& word : UnexpectedArguments(error.what())) {
      if (word.rfind("--", 0) != 0) continue;
      const std::string given = word.substr(0, word.find('='));
      const std::string near = NearestOption(app, sub, given);
      const size_t line = message.find(given + ": not an option");
      if (near.empty() || line == std::string::npos) continue;
      message.insert(std::min(message.find('\n', line), message.size()), fmt::format("; did you mean {}?", near));
    }
  }
  message += sub ? fmt::format("\nsee strata {} --help for its options", sub->get_name())
                 : std::string("\nsee strata --help for the commands");
  return message;
}

}  // namespace strata::cli
