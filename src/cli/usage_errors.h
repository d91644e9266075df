// What strata says when its command line is wrong: an unknown subcommand or option gets the nearest valid
// one suggested, and every message (CLI11's in strata's words) is given as "strata: ..." lines on stderr,
// ending with where the options are listed. Invariant: only usage errors come here; help and --version requests are
// printed by CLI11 itself (cli/main.cc).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace strata::cli {

/// Levenshtein distance between two names.
size_t EditDistance(std::string_view a, std::string_view b);

/// When the first argument is not an option and names no subcommand: "strata: unknown command ..." with
/// the nearest one; nullopt otherwise.
std::optional<std::string> UnknownSubcommand(const CLI::App& app, int argc, char** argv);

/// The message for a parse error of the command line: CLI11's sentence in strata's words (parse_error_wording.h),
/// a suggestion for each unexpected `--option` near one the subcommand (or strata itself) takes, and the --help
/// to read; one error per line, without the "strata: " prefix (the caller's PrintError adds it).
std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

}  // namespace strata::cli
