// CLI11's parse errors in strata's words: every sentence CLI11 can throw at a user of strata ("The following
// argument was not expected: X", "Value 200 not in range 0.000000 to 100.000000", "paths is required") is
// recognised by its error type and wording and said the way the rest of strata speaks: the option and the
// value given first, then what is allowed, numbers as written by a person ("0 to 100").
// Invariant: the result never contains CLI11's own sentence for a case recognised here; a sentence not
// recognised (a future CLI11's) is kept, lower-cased at its start, so nothing is lost.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace strata::cli {

/// The message for `error`, thrown while parsing the command line of `app` (strata) with `sub` the
/// subcommand named on it (nullptr when none): one or more lines, without the "strata: " prefix.
std::string WordParseError(const CLI::App& app, const CLI::App* sub, const CLI::ParseError& error);

/// A number as CLI11 printed it ("0.000000", "100.000000", "4096") as a person writes it ("0", "100", "4096").
std::string PlainNumber(const std::string& printed);

}  // namespace strata::cli
