// The command line's errors in strata's words (cli/usage_errors.h, cli/parse_error_wording.h) and the text width
// (cli/terminal_width.h): a small CLI11 app shaped like strata's is parsed with bad arguments and the message
// must be strata's sentence, never CLI11's (issue 51: "The following argument was not expected", "Value 200
// not in range 0.000000 to 100.000000", "paths is required").
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/parse_error_wording.h"
#include "cli/terminal_width.h"
#include "cli/usage_errors.h"

namespace strata::cli {
namespace {

/// The message strata prints for `args` (after "strata") on an app with a "diagnose PATHS..." and a
/// "diff BASE TEST" subcommand; "" when the arguments parse.
std::string MessageFor(std::vector<std::string> args) {
  CLI::App app{"strata"};
  app.require_subcommand(1);
  std::vector<std::string> paths;
  double min_effect = 5;
  unsigned threads = 0;
  std::string format = "text";
  bool all_ranks = false;
  std::vector<int> base_rank;
  CLI::App* diagnose = app.add_subcommand("diagnose", "");
  diagnose->add_option("paths", paths, "")->required();
  diagnose->add_option("--min-effect", min_effect, "")
      ->check(CLI::Validator([](std::string&) { return ""; }, "FINITE") & CLI::Range(0.0, 100.0));
  diagnose->add_option("--threads", threads, "");
  diagnose->add_option("--format", format, "")->check(CLI::IsMember({"text", "json", "html"}));
  std::string base, test;
  CLI::App* diff = app.add_subcommand("diff", "");
  diff->add_option("BASE", base, "")->required();
  diff->add_option("TEST", test, "")->required();
  auto* rank = diff->add_option("--base-rank", base_rank, "");
  diff->add_flag("--all-ranks", all_ranks, "")->excludes(rank);
  args.insert(args.begin(), "strata");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return UsageErrorMessage(app, e, static_cast<int>(argv.size()), argv.data());
  }
  return "";
}

TEST(UsageErrors, EveryCli11SentenceInStratasWords) {
  EXPECT_EQ(MessageFor({"diagnose", "--min-effect", "200", "x"}),
            "--min-effect 200: must be a number from 0 to 100\nsee strata diagnose --help for its options");
  EXPECT_EQ(MessageFor({"diagnose"}),
            "missing PATHS... (usage: strata diagnose [options] PATHS...)\nsee strata diagnose --help for its options");
  EXPECT_EQ(MessageFor({"diff", "a"}),
            "missing TEST (usage: strata diff [options] BASE TEST)\nsee strata diff --help for its options");
  EXPECT_EQ(MessageFor({"diff", "a", "b", "c"}),
            "unexpected argument 'c' (usage: strata diff [options] BASE TEST)\nsee strata diff --help for its options");
  EXPECT_EQ(MessageFor({"diagnose", "--bogus", "x"}),
            "--bogus: not an option of strata diagnose\nsee strata diagnose --help for its options");
  EXPECT_EQ(MessageFor({"diagnose", "--formt", "json", "x"}),
            "--formt: not an option of strata diagnose; did you mean --format?\n"
            "see strata diagnose --help for its options");
  EXPECT_EQ(MessageFor({"diagnose", "--format", "xml", "x"}),
            "--format xml: must be one of text, json, html\nsee strata diagnose --help for its options");
  EXPECT_EQ(MessageFor({"diagnose", "--threads", "many", "x"}),
            "--threads many: not a whole number\nsee strata diagnose --help for its options");
  EXPECT_EQ(MessageFor({"diagnose", "x", "--threads"}),
            "--threads needs a value\nsee strata diagnose --help for its options");
  const std::string excludes = MessageFor({"diff", "--all-ranks", "--base-rank", "1", "a", "b"});
  EXPECT_TRUE(excludes.rfind("--all-ranks and --base-rank cannot be given together\n", 0) == 0 ||
              excludes.rfind("--base-rank and --all-ranks cannot be given together\n", 0) == 0)
      << excludes;
  EXPECT_EQ(MessageFor({}).rfind("no command given (usage: strata COMMAND [options] ...; the commands: diagnose, "
                                 "diff)",
                                 0),
            0u)
      << MessageFor({});
  // None of CLI11's own sentences, whichever of the cases above.
  for (const auto& args : std::vector<std::vector<std::string>>{{"diagnose", "--min-effect", "200", "x"},
                                                                {"diagnose"},
                                                                {"diff", "a", "b", "c"},
                                                                {"diagnose", "--threads", "many", "x"},
                                                                {}}) {
    const std::string m = MessageFor(args);
    for (const char* cli11 : {"not expected", "not in range", "is required", "Could not convert", "0.000000",
                              "A subcommand", "Requires at least", "Expected"})
      EXPECT_EQ(m.find(cli11), std::string::npos) << cli11 << " in: " << m;
  }
}

TEST(UsageErrors, PlainNumbers) {
  EXPECT_EQ(PlainNumber("0.000000"), "0");
  EXPECT_EQ(PlainNumber("100.000000"), "100");
  EXPECT_EQ(PlainNumber("-1.500000"), "-1.5");
  EXPECT_EQ(PlainNumber("4096"), "4096");
}

// --width wins; COLUMNS is honoured for standard output (piped too); a file written with -o keeps the default.
TEST(TerminalWidth, WidthColumnsAndFiles) {
  EXPECT_EQ(ColumnsVariable("80"), 80u);
  EXPECT_EQ(ColumnsVariable(nullptr), std::nullopt);
  EXPECT_EQ(ColumnsVariable(""), std::nullopt);
  EXPECT_EQ(ColumnsVariable("wide"), std::nullopt);
  EXPECT_EQ(ColumnsVariable("0"), std::nullopt);
  EXPECT_EQ(TextWidth("", 120, 100), 120u);
  EXPECT_EQ(TextWidth("out.txt", 120, 100), 120u);
  ::setenv("COLUMNS", "72", 1);
  EXPECT_EQ(TextWidth("", 0, 100), 72u);
  EXPECT_EQ(TextWidth("-", 0, 100), 72u);
  EXPECT_EQ(TextWidth("out.txt", 0, 100), 100u);
  ::unsetenv("COLUMNS");
}

}  // namespace
}  // namespace strata::cli
