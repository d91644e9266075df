// CLI11's parse errors in strata's words (see parse_error_wording.h). Each function below words one kind of
// error; a sentence none of them recognises falls through to Unrecognised.
#include "cli/parse_error_wording.h"

#include <fmt/format.h>

#include <optional>
#include <regex>
#include <sstream>
#include <vector>

namespace strata::cli {

namespace {

/// The groups of `re` matched against the whole of `s`, or nullopt.
std::optional<std::smatch> Match(const std::string& s, const std::string& re) {
  std::smatch m;
  if (std::regex_match(s, m, std::regex(re))) return m;
  return std::nullopt;
}

/// A sentence kept as CLI11 wrote it but for its first letter.
std::string Unrecognised(std::string what) {
  if (!what.empty() && what[0] >= 'A' && what[0] <= 'Z') what[0] = static_cast<char>(what[0] - 'A' + 'a');
  return what;
}

/// The option of `app` or `sub` named `name` ("--threads", "paths"), or nullptr.
const CLI::Option* FindOption(const CLI::App& app, const CLI::App* sub, const std::string& name) {
  for (const CLI::App* a : {sub, &app}) {
    if (a == nullptr) continue;
    for (const CLI::Option* o : a->get_options())
      if (o->check_name(name) || o->get_name() == name) return o;
  }
  return nullptr;
}

/// What an option's values are, for "not a ...": "whole number", "number", or its type in lower case.
std::string ValueKind(const CLI::Option* option) {
  std::string type = option ? option->get_type_name() : std::string();
  type = type.substr(0, type.find(':'));  // "FLOAT:(FINITE) AND (FLOAT in [0 - 100])": its validators follow
  if (type == "UINT" || type == "INT") return "whole number";
  if (type == "FLOAT") return "number";
  if (type.empty() || type == "TEXT") return "valid value";
  std::string lower;
  for (char c : type) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower;
}

/// A positional argument as a usage line shows it: "PATHS..." for many values, "BASE" for one.
std::string PositionalName(const CLI::Option& o) {
  std::string name;
  for (char c : o.get_name()) name += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return o.get_items_expected_max() > 1 ? name + "..." : name;
}

/// "strata diff [options] BASE TEST": how the subcommand is called.
std::string Usage(const CLI::App* sub) {
  if (sub == nullptr) return "strata COMMAND [options] ...";
  std::string usage = "strata " + sub->get_name() + " [options]";
  for (const CLI::Option* o : sub->get_options())
    if (o->get_positional()) usage += " " + PositionalName(*o);
  return usage;
}

/// "summary, diagnose, diff, ...": the commands of strata.
std::string Commands(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands({})) out += (out.empty() ? "" : ", ") + sub->get_name();
  return out;
}

/// "a, b, c" from CLI11's "{a,b,c}".
std::string SetItems(const std::string& set) {
  std::string out;
  for (char c : set.substr(1, set.size() - 2)) out += c == ',' ? std::string(", ") : std::string(1, c);
  return out;
}

/// A validator's sentence (after "NAME: ") about `value` of option `name`.
std::string WordValidation(const CLI::Option* option, const std::string& name, const std::string& msg) {
  if (auto m = Match(msg, R"(\((.*)\) AND \((.*)\))"))
    return WordValidation(option, name, (*m)[1]) + "\n" + WordValidation(option, name, (*m)[2]);
  if (auto m = Match(msg, R"(Value (.*) not in range (\S+) to (\S+))"))
    return fmt::format("{} {}: must be a {} from {} to {}", name, (*m)[1].str(), ValueKind(option),
                       PlainNumber((*m)[2]), PlainNumber((*m)[3]));
  if (auto m = Match(msg, R"((.*) not in (\{.*\}))"))
    return fmt::format("{} {}: must be one of {}", name, (*m)[1].str(), SetItems((*m)[2]));
  if (auto m = Match(msg, R"(Value (.*) could not be converted.*)"))
    return fmt::format("{} {}: not a {}", name, (*m)[1].str(), ValueKind(option));
  return name + ": " + msg;  // strata's own validators (cli/validators.h) already say what is wrong
}

std::string WordValidationError(const CLI::App& app, const CLI::App* sub, const std::string& what) {
  const size_t colon = what.find(": ");
  if (colon == std::string::npos) return Unrecognised(what);
  const std::string name = what.substr(0, colon);
  return WordValidation(FindOption(app, sub, name), name, what.substr(colon + 2));
}

std::string WordConversionError(const CLI::App& app, const CLI::App* sub, const std::string& what) {
  if (auto m = Match(what, R"(Could not convert: (\S+) = (.*))"))
    return fmt::format("{} {}: not a {}", (*m)[1].str(), (*m)[2].str(), ValueKind(FindOption(app, sub, (*m)[1])));
  if (auto m = Match(what, R"(The value (.*) is not an allowed value for (\S+))"))
    return fmt::format("{} {}: not a value it takes", (*m)[2].str(), (*m)[1].str());
  if (auto m = Match(what, R"((\S+): too many inputs for a flag)"))
    return fmt::format("{} is a flag: it takes no value", (*m)[1].str());
  if (auto m = Match(what, R"((\S+): Should be true/false or a number)"))
    return fmt::format("{} is a flag: give it alone (or =true / =false)", (*m)[1].str());
  return Unrecognised(what);
}

std::string WordRequiredError(const CLI::App& app, const CLI::App* sub, const std::string& what) {
  if (auto m = Match(what, R"((\S+) is required)")) {
    const CLI::Option* option = FindOption(app, sub, (*m)[1]);
    const std::string shown = option && option->get_positional() ? PositionalName(*option) : (*m)[1].str();
    return fmt::format("missing {} (usage: {})", shown, Usage(sub));
  }
  if (Match(what, R"(A subcommand is required|Requires at least \d+ subcommands?.*)"))
    return fmt::format("no command given (usage: {}; the commands: {})", Usage(nullptr), Commands(app));
  return Unrecognised(what);
}

std::string WordArgumentMismatch(const std::string& what) {
  if (auto m = Match(what, R"(Expected exactly (\d+) arguments? to (\S+), got (\d+))"))
    return fmt::format("{} takes {} value{}, {} given", (*m)[2].str(), (*m)[1].str(), (*m)[1] == "1" ? "" : "s",
                       (*m)[3].str());
  if (auto m = Match(what, R"(Expected at least (\d+) arguments? to (\S+), got (\d+))"))
    return fmt::format("{} needs at least {} value{}, {} given", (*m)[2].str(), (*m)[1].str(),
                       (*m)[1] == "1" ? "" : "s", (*m)[3].str());
  if (auto m = Match(what, R"((\S+): (\d+) required .* missing)"))
    return fmt::format("{} needs {}", (*m)[1].str(),
                       (*m)[2] == "1" ? std::string("a value") : (*m)[2].str() + " values");
  if (auto m = Match(what, R"((\S+): At least (\d+) required but received (\d+))"))
    return fmt::format("{} needs at least {} values, {} given", (*m)[1].str(), (*m)[2].str(), (*m)[3].str());
  if (auto m = Match(what, R"((\S+): At Most (\d+) required but received (\d+))"))
    return fmt::format("{} takes at most {} values, {} given", (*m)[1].str(), (*m)[2].str(), (*m)[3].str());
  return Unrecognised(what);
}

/// One line per argument CLI11 did not expect: an unknown option, or an argument the command has no place for.
std::string WordExtras(const CLI::App* sub, const std::string& what) {
  const auto m = Match(what, R"(The following arguments? (?:was|were) not expected: (.*))");
  if (!m) return Unrecognised(what);
  const std::string command = sub ? "strata " + sub->get_name() : std::string("strata");
  std::string out;
  std::istringstream words((*m)[1].str());
  for (std::string w; words >> w;) {
    out += out.empty() ? "" : "\n";
    out += w.size() > 1 && w[0] == '-' ? fmt::format("{}: not an option of {}", w.substr(0, w.find('=')), command)
                                       : fmt::format("unexpected argument '{}' (usage: {})", w, Usage(sub));
  }
  return out;
}

}  // namespace

std::string PlainNumber(const std::string& printed) {
  if (printed.find('.') == std::string::npos) return printed;
  std::string out = printed;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}

std::string WordParseError(const CLI::App& app, const CLI::App* sub, const CLI::ParseError& error) {
  const std::string what = error.what();
  if (dynamic_cast<const CLI::ValidationError*>(&error)) return WordValidationError(app, sub, what);
  if (dynamic_cast<const CLI::ConversionError*>(&error)) return WordConversionError(app, sub, what);
  if (dynamic_cast<const CLI::RequiredError*>(&error)) return WordRequiredError(app, sub, what);
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error)) return WordArgumentMismatch(what);
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) return WordExtras(sub, what);
  if (auto m = Match(what, R"((\S+) excludes (\S+))"))
    return fmt::format("{} and {} cannot be given together", (*m)[1].str(), (*m)[2].str());
  if (auto m = Match(what, R"((\S+) requires (\S+))"))
    return fmt::format("{} needs {} too", (*m)[1].str(), (*m)[2].str());
  return Unrecognised(what);
}

}  // namespace strata::cli
