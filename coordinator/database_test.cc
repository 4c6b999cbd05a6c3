// Tests of the SQLite layer's row helpers: parameters bound in order (an
// empty optional as NULL), every row read in order, a reader that stops
// early, the first row of a statement (and none), and errors surfacing.
#include "coordinator/database.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh::coordinator {
namespace {

// A table of three rows; the second has no note.
constexpr char kSchema[] = "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, name TEXT, note TEXT)";
constexpr char kInsert[] = "INSERT INTO t(k, name, note) VALUES (?1, ?2, ?3)";
constexpr char kAll[] = "SELECT k, name, note FROM t ORDER BY k";

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::Open(dir_ / "t.db", kSchema);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(db_->Run(kInsert, {int64_t{1}, "one", std::optional<std::string>("first")}).ok());
    ASSERT_TRUE(db_->Run(kInsert, {int64_t{2}, std::string("two"), std::optional<std::string>()}).ok());
    ASSERT_TRUE(db_->Run(kInsert, {int64_t{3}, std::string_view("three"), "third"}).ok());
  }

  TestDir dir_;  // outlives db_
  std::unique_ptr<Database> db_;
};

TEST_F(DatabaseTest, ForEachRowReadsEveryRowInOrderWithTypedColumns) {
  std::vector<std::string> seen;
  ASSERT_TRUE(db_->ForEachRow(kAll, {}, [&](const Row& r) {
                   seen.push_back(std::to_string(r.Int(0)) + ":" + r.Text(1) + ":" +
                                  r.OptText(2).value_or("NULL") + (r.IsNull(2) ? "!" : ""));
                 }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"1:one:first", "2:two:NULL!", "3:three:third"}));
}

TEST_F(DatabaseTest, AReaderThatAnswersFalseStopsTheReading) {
  int calls = 0;
  ASSERT_TRUE(db_->ForEachRow(kAll, {}, [&](const Row& r) {
                   ++calls;
                   return r.Int(0) < 2;
                 }).ok());
  EXPECT_EQ(calls, 2);
}

TEST_F(DatabaseTest, FirstRowSaysWhetherThereWasOne) {
  static constexpr char kNameOf[] = "SELECT name FROM t WHERE k = ?1";
  std::string name;
  auto found = db_->FirstRow(kNameOf, {int64_t{2}}, [&](const Row& r) { name = r.Text(0); });
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(*found);
  EXPECT_EQ(name, "two");
  found = db_->FirstRow(kNameOf, {int64_t{9}}, [&](const Row&) { ADD_FAILURE() << "no row to read"; });
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(*found);
  auto text = db_->FirstText(kNameOf, {int64_t{3}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, std::optional<std::string>("three"));
  text = db_->FirstText(kNameOf, {int64_t{9}});
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(text->has_value());
  auto exists = db_->Exists(kNameOf, {std::optional<int64_t>()});
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists) << "an empty optional binds NULL, which equals nothing";
}

TEST_F(DatabaseTest, AStatementThatCannotBePreparedOrRunFails) {
  static constexpr char kNoSuchTable[] = "SELECT 1 FROM nowhere";
  EXPECT_FALSE(db_->ForEachRow(kNoSuchTable, {}, [](const Row&) {}).ok());
  EXPECT_FALSE(db_->Exists(kNoSuchTable, {}).ok());
  // The primary key repeats.
  EXPECT_FALSE(db_->Run(kInsert, {int64_t{1}, "again", "x"}).ok());
  // The statement is usable again after a failure.
  EXPECT_TRUE(db_->Run(kInsert, {int64_t{4}, "four", "x"}).ok());
}

}  // namespace
}  // namespace scimesh::coordinator
