// Tests for InputError::ToString ("file:line:col: key: message", unknown parts omitted)
// and the Result value-or-error holder.
#include "sim/core/status.h"

#include <gtest/gtest.h>

#include <string>

namespace meshsim {
namespace {

InputError MakeError(std::string file, int line, int column, std::string key) {
  InputError e;
  e.file = std::move(file);
  e.line = line;
  e.column = column;
  e.key = std::move(key);
  e.message = "expected an integer, found 'four'";
  return e;
}

TEST(InputErrorToString, NamesFileLineColumnKeyAndMessage) {
  EXPECT_EQ(MakeError("exp.yaml", 6, 7, "plan.tp").ToString(),
            "exp.yaml:6:7: plan.tp: expected an integer, found 'four'");
}

TEST(InputErrorToString, OmitsAnUnknownColumn) {
  EXPECT_EQ(MakeError("exp.yaml", 6, 0, "plan.tp").ToString(),
            "exp.yaml:6: plan.tp: expected an integer, found 'four'");
}

TEST(InputErrorToString, OmitsLineAndColumnWhenTheLineIsUnknown) {
  EXPECT_EQ(MakeError("exp.yaml", 0, 7, "plan.tp").ToString(),
            "exp.yaml: plan.tp: expected an integer, found 'four'");
}

TEST(InputErrorToString, OmitsTheKeyWhenThereIsNone) {
  EXPECT_EQ(MakeError("exp.yaml", 3, 1, "").ToString(),
            "exp.yaml:3:1: expected an integer, found 'four'");
}

TEST(InputErrorToString, OmitsTheLocationWhenThereIsNoFile) {
  EXPECT_EQ(MakeError("", 6, 7, "--trace-ranks").ToString(),
            "--trace-ranks: expected an integer, found 'four'");
}

TEST(InputErrorToString, IsJustTheMessageWhenNothingElseIsKnown) {
  EXPECT_EQ(MakeError("", 0, 0, "").ToString(), "expected an integer, found 'four'");
}

TEST(InputErrorToString, KeepsASetArgumentAsTheFile) {
  EXPECT_EQ(MakeError("--set plan.tp=four", 0, 0, "plan.tp").ToString(),
            "--set plan.tp=four: plan.tp: expected an integer, found 'four'");
}

TEST(Result, HoldsAValue) {
  const Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.value(), 42);
}

TEST(Result, HoldsAnError) {
  const Result<int> r = MakeError("exp.yaml", 1, 2, "name");
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error().key, "name");
  EXPECT_EQ(r.error().line, 1);
}

TEST(Result, StatusOkCarriesNoError) {
  const Status s = Ok{};
  EXPECT_TRUE(s.ok());
}

}  // namespace
}  // namespace meshsim
