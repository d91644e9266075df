// StringPool: dense ids, deduplication, stable views across growth, find(), large strings.
#include "core/string_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

TEST(StringPool, EmptyStringIsIdZero) {
  StringPool pool;
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.view(StringPool::kEmpty), "");
  EXPECT_EQ(pool.intern(""), StringPool::kEmpty);
  EXPECT_EQ(pool.find(""), StringPool::kEmpty);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(StringPool, IdsAreDenseFromOneAndStable) {
  StringPool pool;
  EXPECT_EQ(pool.intern("a").value, 1u);
  EXPECT_EQ(pool.intern("b").value, 2u);
  EXPECT_EQ(pool.intern("a").value, 1u);
  EXPECT_EQ(pool.intern("c").value, 3u);
  EXPECT_EQ(pool.intern("b").value, 2u);
  EXPECT_EQ(pool.size(), 4u);
  EXPECT_EQ(pool.view(StringId(1)), "a");
  EXPECT_EQ(pool.view(StringId(2)), "b");
  EXPECT_EQ(pool.view(StringId(3)), "c");
}

TEST(StringPool, DistinguishesSimilarStrings) {
  StringPool pool;
  const std::vector<std::string> words = {"x",
                                          "xx",
                                          "x ",
                                          " x",
                                          "X",
                                          std::string("x\0y", 3),
                                          std::string("x\0z", 3),
                                          "abcdefgh",
                                          "abcdefgi",
                                          "abcdefgh1",
                                          "abcdefghabcdefgh"};
  std::vector<StringId> ids;
  for (const auto& w : words) ids.push_back(pool.intern(w));
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(ids[i].value, i + 1) << "word " << i;
    EXPECT_EQ(pool.view(ids[i]), words[i]);
    EXPECT_EQ(pool.find(words[i]), ids[i]);
  }
}

TEST(StringPool, FindDoesNotInsert) {
  StringPool pool;
  pool.intern("present");
  EXPECT_EQ(pool.find("present").value, 1u);
  EXPECT_EQ(pool.find("absent"), StringPool::kNotFound);
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.intern("absent").value, 2u);
  EXPECT_EQ(pool.find("absent").value, 2u);
}

TEST(StringPool, ViewsStayValidAcrossGrowth) {
  StringPool pool;
  constexpr int kCount = 200000;  // many rehashes and many arena blocks
  std::vector<std::string_view> views;
  std::vector<const char*> data;
  views.reserve(kCount);
  for (int i = 0; i < kCount; ++i) {
    const std::string s = "kernel_name_" + std::to_string(i) + std::string(static_cast<size_t>(i % 37), 'q');
    const StringId id = pool.intern(s);
    ASSERT_EQ(id, static_cast<StringId>(i + 1));
    views.push_back(pool.view(id));
    data.push_back(pool.view(id).data());
  }
  EXPECT_EQ(pool.size(), static_cast<size_t>(kCount) + 1);
  for (int i = 0; i < kCount; ++i) {
    const std::string s = "kernel_name_" + std::to_string(i) + std::string(static_cast<size_t>(i % 37), 'q');
    // The view taken right after interning still points at the same bytes and still reads the same.
    ASSERT_EQ(views[i], s) << i;
    ASSERT_EQ(pool.view(static_cast<StringId>(i + 1)).data(), data[i]) << i;
    ASSERT_EQ(pool.find(s), static_cast<StringId>(i + 1)) << i;
    ASSERT_EQ(pool.intern(s), static_cast<StringId>(i + 1)) << i;
  }
  EXPECT_EQ(pool.size(), static_cast<size_t>(kCount) + 1);
  EXPECT_GT(pool.memory_bytes(), static_cast<size_t>(kCount) * 12);
}

TEST(StringPool, LargeStrings) {
  StringPool pool;
  const std::string small = "small";
  const std::string big(1 << 20, 'z');  // larger than an arena block
  std::string big2 = big;
  big2.back() = 'y';                                 // differs only in its last byte
  const std::string medium(64 * 1024 / 4 + 1, 'm');  // just over the "own block" threshold
  const StringId s = pool.intern(small);
  const StringId b = pool.intern(big);
  const StringId b2 = pool.intern(big2);
  const StringId m = pool.intern(medium);
  EXPECT_NE(b, b2);
  EXPECT_EQ(pool.view(b), big);
  EXPECT_EQ(pool.view(b2), big2);
  EXPECT_EQ(pool.view(m), medium);
  EXPECT_EQ(pool.view(s), small);
  EXPECT_EQ(pool.intern(big), b);
  EXPECT_EQ(pool.find(big2), b2);
  // Interning after a large string keeps using the arena correctly.
  const StringId after = pool.intern("after");
  EXPECT_EQ(pool.view(after), "after");
  EXPECT_GE(pool.memory_bytes(), 2u * (1u << 20));
}

TEST(StringPool, MoveKeepsContent) {
  StringPool pool;
  const StringId id = pool.intern("moved");
  StringPool other = std::move(pool);
  EXPECT_EQ(other.view(id), "moved");
  EXPECT_EQ(other.find("moved"), id);
}

}  // namespace
}  // namespace strata
