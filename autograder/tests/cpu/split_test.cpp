// reduce/split.hpp: the one way every process of the course cuts a list, with the two rules its
// callers rely on (lists drop empty items, a table's line keeps empty fields).
#include <reduce/split.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using Items = std::vector<std::string>;

TEST(Split, DropsEmptyItemsAtEitherEndAndBetween) {
  EXPECT_EQ(reduce::split("a,,b,", ","), (Items{"a", "b"}));
  EXPECT_EQ(reduce::split(",a", ","), (Items{"a"}));
  EXPECT_EQ(reduce::split("", ","), Items{});
  EXPECT_EQ(reduce::split(",,,", ","), Items{});
}

TEST(Split, AnyOfSeveralSeparatorsCuts) {
  EXPECT_EQ(reduce::split("a b\tc\n\nd", " \t\n"), (Items{"a", "b", "c", "d"}));
  EXPECT_EQ(reduce::split("ab", ""), (Items{"ab"})) << "no separator: the whole text";
}

TEST(Split, ControlCharactersSeparateNestedLists) {
  // The grader hands the lab runner lists of lists this way: \x1e between lists, \x1f within.
  const std::string text =
      "a\x1f"
      "b\x1e"
      "c\x1e\x1e"
      "d\x1f";
  const Items lists = reduce::split(text, "\x1e");
  ASSERT_EQ(lists, (Items{"a\x1f"
                          "b",
                          "c", "d\x1f"}));
  EXPECT_EQ(reduce::split(lists[0], "\x1f"), (Items{"a", "b"}));
  EXPECT_EQ(reduce::split(lists[2], "\x1f"), (Items{"d"}));
}

TEST(SplitFields, KeepsEmptyFieldsSoColumnsStayInPlace) {
  EXPECT_EQ(reduce::split_fields("a\t\tb", '\t'), (Items{"a", "", "b"}));
  EXPECT_EQ(reduce::split_fields("a\t", '\t'), (Items{"a", ""}));
  EXPECT_EQ(reduce::split_fields("", '\t'), (Items{""}));
  EXPECT_EQ(reduce::split_fields("x:y", ':'), (Items{"x", "y"}));
}

}  // namespace
