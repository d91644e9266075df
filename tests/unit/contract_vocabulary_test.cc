// The closed vocabularies' one name table each (analysis/diagnosis/contract_vocabulary.h and the others that
// follow its pattern): every enumerator's name parses back to it, names are distinct, and where the JSON
// contract (../shared/spec/diagnosis.schema.json) lists the vocabulary as an enum, the names are exactly its
// values.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/whatif/whatif.h"
#include "test_util.h"

namespace strata::diagnosis {
namespace {

// Every enumerator of a name table parses back to itself and no two share a name; returns the names.
template <typename Enum, size_t N, typename NameOf, typename Parse>
std::vector<std::string> RoundTrip(const std::array<std::string_view, N>& names, NameOf name_of, Parse parse) {
  std::vector<std::string> out;
  for (size_t i = 0; i < N; ++i) {
    const Enum e = static_cast<Enum>(i);
    const std::string_view name = name_of(e);
    EXPECT_EQ(name, names[i]);
    const auto back = parse(name);
    EXPECT_TRUE(back.has_value()) << name;
    if (back) {
      EXPECT_EQ(static_cast<size_t>(*back), i) << name;
    }
    out.emplace_back(name);
  }
  EXPECT_EQ(std::set<std::string>(out.begin(), out.end()).size(), N) << "two enumerators share a name";
  EXPECT_FALSE(parse("no such name").has_value());
  return out;
}

// The schema's enum at a JSON pointer, as strings (null rendered as ""), or an empty list when the schema is
// absent (the test then checks the round trip only).
std::vector<std::string> SchemaEnum(const std::string& pointer) {
  std::ifstream in(strata::testing::SharedDir() + "/spec/diagnosis.schema.json");
  if (!in) return {};
  const nlohmann::json schema = nlohmann::json::parse(in);
  std::vector<std::string> out;
  for (const auto& v : schema.at(nlohmann::json::json_pointer(pointer)))
    out.push_back(v.is_null() ? "" : v.get<std::string>());
  return out;
}

std::set<std::string> AsSet(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

TEST(ContractVocabulary, CausesRoundTripAndAreTheSchemas) {
  const auto names = RoundTrip<Cause>(kCauseNames, CauseName, ParseCause);
  const auto schema = SchemaEnum("/properties/findings/items/properties/cause/enum");
  if (!schema.empty()) {
    EXPECT_EQ(AsSet(names), AsSet(schema));
  }
}

TEST(ContractVocabulary, LayersRoundTripAndAreTheSchemas) {
  const auto names = RoundTrip<Layer>(kLayerNames, LayerName, ParseLayer);
  const auto schema = SchemaEnum("/properties/findings/items/properties/layer/enum");
  if (!schema.empty()) {
    EXPECT_EQ(AsSet(names), AsSet(schema));  // kNone is the schema's null
  }
}

TEST(ContractVocabulary, VerdictsRoundTripAndAreTheSchemasStatus) {
  const auto names = RoundTrip<Verdict>(kVerdictNames, VerdictName, ParseVerdict);
  const auto schema = SchemaEnum("/properties/status/enum");
  if (!schema.empty()) {
    EXPECT_EQ(AsSet(names), AsSet(schema));
  }
  EXPECT_EQ(Verdict{}, Verdict::kInconclusive) << "a result not yet judged reads as inconclusive";
}

TEST(ContractVocabulary, WhatIfModelsRoundTrip) {
  const auto names = RoundTrip<WhatIfModel>(kWhatIfModelNames, WhatIfModelName, ParseWhatIfModel);
  EXPECT_EQ(names.front(), "none");
}

TEST(ContractVocabulary, EvidenceSourcesRoundTrip) {
  const auto names = RoundTrip<EvidenceSource>(kEvidenceSourceNames, EvidenceSourceName, ParseEvidenceSource);
  EXPECT_EQ(names.front(), "") << "kNone is not rendered";
  EXPECT_EQ(EvidenceSourceName(EvidenceSource::kRecorderLink), "recorder: link");
}

TEST(ContractVocabulary, LiveDetectionsScoresAndPersistencesRoundTrip) {
  EXPECT_EQ(RoundTrip<DecidingScore>(kDecidingScoreNames, DecidingScoreName, ParseDecidingScore),
            (std::vector<std::string>{"peers", "self"}));
  EXPECT_EQ(RoundTrip<Persistence>(kPersistenceNames, PersistenceName, ParsePersistence),
            (std::vector<std::string>{"lasting", "recurring", "one_off"}));
}

TEST(ContractVocabulary, WhatIfAttributionKindsRoundTrip) {
  EXPECT_EQ(RoundTrip<whatif::AttributionKind>(whatif::kAttributionKindNames, whatif::AttributionKindName,
                                               whatif::ParseAttributionKind),
            (std::vector<std::string>{"worker", "dp_rank", "stage", "op_type"}));
}

}  // namespace
}  // namespace strata::diagnosis
