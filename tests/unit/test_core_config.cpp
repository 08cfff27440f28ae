// The settings table reader: value parsing, precedence (defaults < file < environment) and
// the problems reported for bad values and unknown names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/config.hpp"

extern char** environ;

namespace gddt::config {
namespace {

// Every test starts from an environment without GDDT_* variables and with an empty
// XDG config directory, so the user's own settings cannot leak in.
class ConfigTest : public ::testing::Test {
 protected:
  static void unset_gddt_variables() {
    std::vector<std::string> names;
    for (char** variable = environ; *variable != nullptr; ++variable) {
      std::string assignment = *variable;
      if (assignment.rfind("GDDT_", 0) == 0) names.push_back(assignment.substr(0, assignment.find('=')));
    }
    for (const std::string& name : names) unsetenv(name.c_str());
  }

  void SetUp() override {
    unset_gddt_variables();
    char pattern[] = "/tmp/gddt_config_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    setenv("XDG_CONFIG_HOME", directory_.c_str(), 1);
    reload_for_testing();
  }

  void TearDown() override {
    ASSERT_EQ(std::system(("rm -rf " + directory_).c_str()), 0);
    unset_gddt_variables();
    unsetenv("XDG_CONFIG_HOME");
    reload_for_testing();
  }

  std::string write_file(const std::string& relative_path, const std::string& text) {
    std::string path = directory_ + "/" + relative_path;
    std::string parent = path.substr(0, path.rfind('/'));
    EXPECT_EQ(std::system(("mkdir -p " + parent).c_str()), 0);
    std::ofstream(path) << text;
    return path;
  }

  static Row row(const std::string& name) {
    for (const Row& candidate : rows()) {
      if (name == candidate.name) return candidate;
    }
    ADD_FAILURE() << "no row " << name;
    return Row{};
  }

  static bool has_problem(const std::string& fragment) {
    for (const std::string& problem : problems()) {
      if (problem.find(fragment) != std::string::npos) return true;
    }
    return false;
  }

  std::string directory_;
};

TEST(ParseSize, AcceptsBytesAndBinarySuffixes) {
  const std::pair<const char*, std::uint64_t> cases[] = {
      {"0", 0},           {"123", 123},        {"4K", 4096},          {"4k", 4096},
      {"4M", 4u << 20},   {"4MB", 4u << 20},   {"4MiB", 4u << 20},    {" 8M ", 8u << 20},
      {"1G", 1ull << 30}, {"2T", 2ull << 40},
  };
  for (const auto& [text, expected] : cases) {
    std::uint64_t bytes = 1;
    EXPECT_TRUE(parse_size(text, &bytes)) << text;
    EXPECT_EQ(bytes, expected) << text;
  }
}

TEST(ParseSize, RejectsNonSizesAndOverflow) {
  for (const char* text : {"", "M", "-1", "+1", "4X", "1.5M", "4 M B", "16E3", "99999999999999999999",
                           "18446744073709551616", "16777216T"}) {
    std::uint64_t bytes = 7;
    EXPECT_FALSE(parse_size(text, &bytes)) << text;
    EXPECT_EQ(bytes, 7u) << text;
  }
  std::uint64_t bytes = 0;
  EXPECT_TRUE(parse_size("18446744073709551615", &bytes));
  EXPECT_EQ(bytes, ~std::uint64_t{0});
}

TEST_F(ConfigTest, DefaultsAreValidAndReportedAsDefaults) {
  EXPECT_TRUE(problems().empty()) << problems().front();
  for (const Row& entry : rows()) {
    EXPECT_EQ(entry.source, "default") << entry.name;
    EXPECT_EQ(entry.value_text, entry.default_text) << entry.name;
  }
  EXPECT_FALSE(settings().disable);
  EXPECT_EQ(settings().staging_chunk, 4u << 20);
  EXPECT_EQ(pack_host(), PackHost::kMpi);
}

TEST_F(ConfigTest, BooleansAcceptTheUsualSpellings) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "on"}) {
    setenv("GDDT_DISABLE", yes, 1);
    reload_for_testing();
    EXPECT_TRUE(settings().disable) << yes;
    EXPECT_EQ(row("GDDT_DISABLE").value_text, "1");
  }
  for (const char* no : {"0", "false", "no", "Off"}) {
    setenv("GDDT_MEMORY_CACHE", no, 1);
    reload_for_testing();
    EXPECT_FALSE(settings().memory_cache) << no;
  }
  EXPECT_TRUE(problems().empty());
}

TEST_F(ConfigTest, BadValueKeepsThePreviousOneAndIsReported) {
  setenv("GDDT_DISABLE", "maybe", 1);
  setenv("GDDT_PACK_HOST", "bogus", 1);
  setenv("GDDT_STAGING_CHUNK", "lots", 1);
  reload_for_testing();
  EXPECT_FALSE(settings().disable);
  EXPECT_EQ(pack_host(), PackHost::kMpi);
  EXPECT_EQ(settings().staging_chunk, 4u << 20);
  EXPECT_EQ(row("GDDT_PACK_HOST").source, "default");
  EXPECT_EQ(problems().size(), 3u);
  EXPECT_TRUE(has_problem("GDDT_DISABLE=maybe"));
  EXPECT_TRUE(has_problem("expected one of mpi|gddt"));
  EXPECT_TRUE(has_problem("GDDT_STAGING_CHUNK=lots"));
}

TEST_F(ConfigTest, EnumsMatchListedValuesIgnoringCase) {
  setenv("GDDT_PACK_HOST", "GDDT", 1);
  setenv("GDDT_LOG_LEVEL", "error", 1);
  reload_for_testing();
  EXPECT_EQ(pack_host(), PackHost::kGddt);
  EXPECT_EQ(log_level(), LogLevel::kError);
  EXPECT_EQ(row("GDDT_PACK_HOST").source, "environment");
}

// The C++ enums of config_enums.def list the values of their rows in the same order, one
// enumerator each ("kAuto, kDevice, kHost" for "auto|device|host").
TEST_F(ConfigTest, EnumTypesFollowTheirRows) {
  const std::vector<EnumSpelling> spellings = enum_spellings();
  std::size_t enum_rows = 0;
  for (const Row& entry : rows()) enum_rows += entry.kind == Kind::kEnum;
  EXPECT_EQ(spellings.size(), enum_rows);
  for (const EnumSpelling& spelling : spellings) {
    std::string expected;
    for (const char* c = spelling.enumerators; *c != '\0'; ++c) {
      if (*c == 'k' && (c == spelling.enumerators || c[-1] == ' ')) continue;
      if (*c == ' ') continue;
      expected += *c == ',' ? '|' : static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    }
    EXPECT_EQ(row(spelling.name).values, expected) << spelling.name;
  }
}

TEST_F(ConfigTest, SizesReadBackInTheirShortestForm) {
  setenv("GDDT_STAGING_CHUNK", "1048576", 1);
  setenv("GDDT_POOL_PINNED_MAX", "1000", 1);
  reload_for_testing();
  EXPECT_EQ(settings().staging_chunk, 1u << 20);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").value_text, "1M");
  EXPECT_EQ(row("GDDT_POOL_PINNED_MAX").value_text, "1000");
}

TEST_F(ConfigTest, FileIsReadAndEnvironmentWins) {
  std::string path = write_file("named.conf",
                                "# gddt settings\n"
                                "STAGING_CHUNK=2M\n"
                                "  GDDT_POOL_PINNED_MAX = 1G   # staging pool\n"
                                "gddt_pack_host=gddt\n"
                                "\n"
                                "NOT_A_SETTING=3\n"
                                "no equals sign here\n");
  setenv("GDDT_CONFIG_FILE", path.c_str(), 1);
  setenv("GDDT_POOL_PINNED_MAX", "64M", 1);
  reload_for_testing();
  EXPECT_EQ(settings().staging_chunk, 2u << 20);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source, "file " + path);
  EXPECT_EQ(pack_host(), PackHost::kGddt);
  EXPECT_EQ(settings().pool_pinned_max, 64u << 20);
  EXPECT_EQ(row("GDDT_POOL_PINNED_MAX").source, "environment");
  EXPECT_EQ(settings().config_file, path);
  EXPECT_EQ(problems().size(), 2u);
  EXPECT_TRUE(has_problem(":6: unknown setting GDDT_NOT_A_SETTING"));
  EXPECT_TRUE(has_problem(":7: expected NAME=VALUE"));
}

TEST_F(ConfigTest, XdgFileIsReadWhenNoFileIsNamed) {
  std::string path = write_file("gddt/gddt.conf", "DISABLE=yes\nCONFIG_FILE=/elsewhere\n");
  reload_for_testing();
  EXPECT_TRUE(settings().disable);
  EXPECT_EQ(settings().config_file, path);
  EXPECT_EQ(row("GDDT_CONFIG_FILE").source, "default location");
  EXPECT_TRUE(has_problem("has no effect inside a config file"));
}

TEST_F(ConfigTest, EmptyConfigFileVariableSkipsTheDefaultFile) {
  write_file("gddt/gddt.conf", "DISABLE=yes\n");
  setenv("GDDT_CONFIG_FILE", "", 1);
  reload_for_testing();
  EXPECT_FALSE(settings().disable);
  EXPECT_TRUE(problems().empty());
}

TEST_F(ConfigTest, MissingNamedFileIsReported) {
  setenv("GDDT_CONFIG_FILE", (directory_ + "/absent.conf").c_str(), 1);
  reload_for_testing();
  EXPECT_TRUE(has_problem("cannot read config file"));
}

TEST_F(ConfigTest, DirectoryAsConfigFileIsReported) {
  setenv("GDDT_CONFIG_FILE", directory_.c_str(), 1);
  reload_for_testing();
  EXPECT_TRUE(has_problem("cannot read config file"));
}

TEST_F(ConfigTest, SizeOutsideItsRowsBoundsIsReported) {
  setenv("GDDT_RESIDENT_BLOCKS", "0", 1);
  reload_for_testing();
  EXPECT_EQ(settings().resident_blocks, 8u);
  EXPECT_TRUE(has_problem("GDDT_RESIDENT_BLOCKS=0"));
  EXPECT_TRUE(has_problem("in 1..16"));
  setenv("GDDT_RESIDENT_BLOCKS", "16", 1);
  reload_for_testing();
  EXPECT_EQ(settings().resident_blocks, 16u);
  EXPECT_TRUE(problems().empty());
}

TEST_F(ConfigTest, UnknownEnvironmentVariableIsReported) {
  setenv("GDDT_STAGING_CHUNKK", "8M", 1);
  reload_for_testing();
  EXPECT_EQ(settings().staging_chunk, 4u << 20);
  EXPECT_TRUE(has_problem("unknown environment variable GDDT_STAGING_CHUNKK"));
}

}  // namespace
}  // namespace gddt::config
