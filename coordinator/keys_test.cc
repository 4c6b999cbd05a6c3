// Tests of keys: scopes, `keys add`, identification and reload.
#include "coordinator/keys.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "protocol/util/sha256.h"
#include "tests/support/test_dir.h"

namespace scimesh::coordinator {
namespace {

class KeysTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_ / name; }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static int Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return static_cast<int>(st.st_mode & 0777);
  }
  TestDir dir_;
};

TEST(Scopes, ParseAndPrint) {
  auto s = ParseScopes("worker,execute");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, kScopeWorker | kScopeExecute);
  EXPECT_EQ(ScopesText(*s), "worker,execute");
  EXPECT_FALSE(ParseScopes("worker,root").ok());
  EXPECT_FALSE(ParseScopes("").ok());
  KeyIdentity admin{"a", kScopeAdmin};
  EXPECT_TRUE(admin.Allows(kScopeWorker));
  KeyIdentity worker{"w", kScopeWorker};
  EXPECT_FALSE(worker.Allows(kScopeExecute));
}

TEST_F(KeysTest, AddKeyStoresOnlyTheHashAndWritesTheSecret0600) {
  auto added = AddKey(Path("keys"), "w1", "worker", Path("w1.secret"), "*");
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, "added key w1 (worker)");
  std::string secret = Slurp(Path("w1.secret"));
  ASSERT_FALSE(secret.empty());
  secret.pop_back();  // newline
  EXPECT_EQ(Mode(Path("keys")), 0600);
  EXPECT_EQ(Mode(Path("w1.secret")), 0600);
  std::string keys = Slurp(Path("keys"));
  EXPECT_EQ(keys.find(secret), std::string::npos);
  EXPECT_EQ(keys, "w1 worker " + Sha256Hex(secret) + " workflows=*\n");
}

TEST_F(KeysTest, IdentifiesTokensByTheirHash) {
  ASSERT_TRUE(AddKey(Path("keys"), "w1", "worker", Path("w1"), "*").ok());
  ASSERT_TRUE(AddKey(Path("keys"), "ops", "execute,admin", Path("ops")).ok());
  auto ring = KeyRing::Load(Path("keys"));
  ASSERT_TRUE(ring.ok());
  std::string w1 = Slurp(Path("w1"));
  w1.pop_back();
  auto id = (*ring)->Identify(w1);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->name, "w1");
  EXPECT_EQ(id->scopes, kScopeWorker);
  EXPECT_FALSE((*ring)->Identify(w1 + "x").has_value());
  EXPECT_FALSE((*ring)->Identify("").has_value());
  EXPECT_FALSE((*ring)->Identify(Sha256Hex(w1)).has_value());  // the stored hash is not a key
}

TEST_F(KeysTest, RefusesADuplicateNameAndBadInput) {
  ASSERT_TRUE(AddKey(Path("keys"), "w1", "worker", Path("a"), "*").ok());
  EXPECT_EQ(AddKey(Path("keys"), "w1", "worker", Path("b"), "*").status().code(), Code::kAlreadyExists);
  EXPECT_FALSE(AddKey(Path("keys"), "bad name", "worker", Path("c"), "*").ok());
  EXPECT_FALSE(AddKey(Path("keys"), "w2", "root", Path("d")).ok());
}

// Attack: a worker key made without globs may register any workflow nobody
// registered yet, and so receive the input of runs another team starts
// under that name. `keys add` never makes one: '*' must be asked for.
TEST_F(KeysTest, AWorkerKeyNeedsTheWorkflowsItServes) {
  auto refused = AddKey(Path("keys"), "w1", "worker", Path("w1"));
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--workflows"), std::string::npos) << refused.status().message();
  EXPECT_FALSE(AddKey(Path("keys"), "w2", "worker,execute", Path("w2")).ok());
  EXPECT_FALSE(std::filesystem::exists(Path("w1")));  // nothing written
  EXPECT_FALSE(std::filesystem::exists(Path("keys")));
  EXPECT_TRUE(AddKey(Path("keys"), "ops", "execute", Path("ops")).ok());  // other scopes name none
  // Lines older releases wrote, without workflows=, still load.
  std::ofstream(Path("old")) << "w9 worker " << std::string(64, 'a') << "\n";
  EXPECT_TRUE(KeyRing::Load(Path("old")).ok());
}

TEST_F(KeysTest, RefusesAMalformedKeysFile) {
  std::ofstream(Path("keys")) << "w1 worker nothex\n";
  EXPECT_FALSE(KeyRing::Load(Path("keys")).ok());
  std::ofstream(Path("keys2")) << "# comment\n\nw1 wizard " << std::string(64, 'a') << "\n";
  EXPECT_FALSE(KeyRing::Load(Path("keys2")).ok());
}

TEST_F(KeysTest, AKeyMayNameTheWorkflowsItRegistersAndTheReadScope) {
  ASSERT_TRUE(AddKey(Path("keys"), "chem", "worker", Path("chem"), "chem-*,qc?").ok());
  ASSERT_TRUE(AddKey(Path("keys"), "dash", "read", Path("dash")).ok());
  EXPECT_NE(Slurp(Path("keys")).find(" workflows=chem-*,qc?\n"), std::string::npos);
  auto ring = KeyRing::Load(Path("keys"));
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  std::string chem = Slurp(Path("chem"));
  chem.pop_back();
  auto id = (*ring)->Identify(chem);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->workflows, (std::vector<std::string>{"chem-*", "qc?"}));
  std::string dash = Slurp(Path("dash"));
  dash.pop_back();
  id = (*ring)->Identify(dash);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->scopes, kScopeRead);
  EXPECT_TRUE(id->workflows.empty());
  // Globs hold only name characters, '*' and '?'; nothing else follows them.
  EXPECT_FALSE(AddKey(Path("keys"), "x", "worker", Path("x"), "a/b").ok());
  EXPECT_FALSE(AddKey(Path("keys"), "y", "worker", Path("y"), "a,,b").ok());
  std::ofstream(Path("keys3")) << "w1 worker " << std::string(64, 'a') << " workflows=[ab]\n";
  EXPECT_FALSE(KeyRing::Load(Path("keys3")).ok());
  std::ofstream(Path("keys4")) << "w1 worker " << std::string(64, 'a') << " flows=ab\n";
  EXPECT_FALSE(KeyRing::Load(Path("keys4")).ok());
}

TEST_F(KeysTest, PicksUpANewKeyWhileRunningAtMostOnceASecond) {
  ASSERT_TRUE(AddKey(Path("keys"), "w1", "worker", Path("w1"), "*").ok());
  ::scimesh::ManualClock clock;
  auto ring = KeyRing::Load(Path("keys"), clock);
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(AddKey(Path("keys"), "w2", "worker", Path("w2"), "*").ok());
  std::string w2 = Slurp(Path("w2"));
  w2.pop_back();
  clock.Advance(std::chrono::milliseconds(999));
  EXPECT_FALSE((*ring)->Identify(w2).has_value()) << "the file is looked at again a second after it was read";
  clock.Advance(std::chrono::milliseconds(1));
  auto id = (*ring)->Identify(w2);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->name, "w2");
  // A file that became invalid keeps the last good keys.
  std::ofstream(Path("keys"), std::ios::app) << "broken line\n";
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE((*ring)->Identify(w2).has_value());
  EXPECT_EQ((*ring)->size(), 2u);
}

}  // namespace
}  // namespace scimesh::coordinator
