// RFC 4180 records (importers/csv_reader): BOM, "" escapes, delimiters and newlines inside quotes, ';' and
// tab delimiters picked from the header, CRLF, blank lines, ragged rows left to the caller, errors for an
// unclosed quote and an oversized record -- each with chunks small enough that records straddle them.
#include "importers/csv_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace strata {
namespace {

struct Read {
  char delimiter = 0;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<uint64_t> lines;
  std::string error;
};

Read ReadAll(const std::string& text, size_t chunk, const std::vector<std::string>& expected = {"a", "b", "c"},
             size_t max_record = 1 << 20) {
  testing::TempFile f(text, ".csv");
  auto src = ByteSource::Open(f.path());
  EXPECT_TRUE(src.ok());
  CsvReader csv(*src.value(), max_record, chunk);
  Read out;
  if (Status st = csv.ReadHeader(expected, &out.header); !st.ok()) {
    out.error = st.message();
    return out;
  }
  out.delimiter = csv.delimiter();
  std::vector<std::string_view> fields;
  while (true) {
    auto more = csv.Next(&fields);
    if (!more.ok()) {
      out.error = more.error();
      return out;
    }
    if (!more.value()) return out;
    out.rows.emplace_back(fields.begin(), fields.end());
    out.lines.push_back(csv.line());
  }
}

using Rows = std::vector<std::vector<std::string>>;

TEST(CsvReader, QuotesEscapesDelimitersAndNewlinesInsideFields) {
  const std::string text =
      "a,b,c\n"
      "1,\"x, y\",3\n"
      "\"say \"\"hi\"\"\",\"two\nlines\",\"\"\n"
      "4,,6\n";
  for (size_t chunk : {16, 17, 18, 19, 20, 23, 4096}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    const Read r = ReadAll(text, chunk);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.header, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(r.rows, (Rows{{"1", "x, y", "3"}, {"say \"hi\"", "two\nlines", ""}, {"4", "", "6"}}));
    EXPECT_EQ(r.lines, (std::vector<uint64_t>{2, 3, 5}));  // the quoted newline moves the next record down
  }
}

TEST(CsvReader, ByteOrderMarkCrlfAndBlankLines) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,b,c\r\n1,2,3\r\n\r\n4,\"5\",6\r\n";
  for (size_t chunk : {16, 4096}) {
    const Read r = ReadAll(text, chunk);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.header, (std::vector<std::string>{"a", "b", "c"}));  // no BOM in the first name
    EXPECT_EQ(r.rows, (Rows{{"1", "2", "3"}, {"4", "5", "6"}}));
  }
}

TEST(CsvReader, SemicolonAndTabDelimitersComeFromTheHeader) {
  Read r = ReadAll("a;b;c\n1,5;2;3\n", 4096);  // Excel in a comma-decimal locale
  EXPECT_EQ(r.delimiter, ';');
  EXPECT_EQ(r.rows, (Rows{{"1,5", "2", "3"}}));
  r = ReadAll("a\tb\tc\n1\t2\t3\n", 4096);
  EXPECT_EQ(r.delimiter, '\t');
  EXPECT_EQ(r.rows, (Rows{{"1", "2", "3"}}));
  // Expected names decide when counts mislead: "x,y" is one quoted name in a ';' file.
  r = ReadAll("a;\"x,y\";b;c\n1;2;3;4\n", 4096);
  EXPECT_EQ(r.delimiter, ';');
  EXPECT_EQ(r.header, (std::vector<std::string>{"a", "x,y", "b", "c"}));
}

TEST(CsvReader, RaggedRowsAreReturnedAsTheyAre) {
  const Read r = ReadAll("a,b,c\n1,2\n1,2,3,4\n", 4096);
  ASSERT_TRUE(r.error.empty());
  EXPECT_EQ(r.rows, (Rows{{"1", "2"}, {"1", "2", "3", "4"}}));
}

TEST(CsvReader, UnclosedQuoteAndOversizedRecordAreErrorsNamingTheLine) {
  Read r = ReadAll("a,b,c\n1,2,3\n4,\"never closed,6\n7,8,9\n", 16);
  EXPECT_NE(r.error.find("line 3: a quoted field is not closed"), std::string::npos) << r.error;
  r = ReadAll("a,b,c\n1,\"" + std::string(500, 'x') + "\",3\n", 16, {"a", "b", "c"}, 100);
  EXPECT_NE(r.error.find("line 2: a record longer than 100 bytes"), std::string::npos) << r.error;
  r = ReadAll("", 16);
  EXPECT_NE(r.error.find("empty op table"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace strata
