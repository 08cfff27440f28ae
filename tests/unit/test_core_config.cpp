// The settings table reader: value parsing, precedence (defaults < file < environment), the
// resolution of `auto` (gddt-tune profile, else built-in model), the source each value reports,
// and the problems reported for bad values and unknown names.
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

// Without a profile, every setting the machine decides is `auto` resolved by its built-in model
// and says so; the others hold their defaults.
TEST_F(ConfigTest, DefaultsAreValidAndReportedAsDefaultsOrTheModel) {
  EXPECT_TRUE(problems().empty()) << problems().front();
  EXPECT_EQ(profile_in_use(), "");
  for (const Row& entry : rows()) {
    if (*entry.model_text != '\0') {
      EXPECT_STREQ(entry.default_text, "auto") << entry.name;
      EXPECT_TRUE(entry.kind == Kind::kSize || entry.kind == Kind::kCount) << entry.name;
      EXPECT_EQ(entry.source_kind, Source::kModel) << entry.name;
      EXPECT_EQ(entry.source, "built-in model") << entry.name;
      EXPECT_EQ(entry.value_text, entry.model_text) << entry.name;
    } else {
      EXPECT_EQ(entry.source_kind, Source::kDefault) << entry.name;
      EXPECT_EQ(entry.source, "default") << entry.name;
      EXPECT_EQ(entry.value_text, entry.default_text) << entry.name;
    }
  }
  EXPECT_FALSE(settings().disable);
  EXPECT_EQ(settings().staging_chunk, 4u << 20);
  EXPECT_EQ(pack_host(), PackHost::kMpi);
}

// The built-in model is the set of numbers measured on H100 and H200 machines that the code
// used to compile in; a change to one is a change of tuning and should be deliberate.
TEST_F(ConfigTest, BuiltInModelHoldsTheMeasuredNumbers) {
  const Settings& s = settings();
  EXPECT_EQ(s.staging_chunk, 4u << 20);
  EXPECT_EQ(s.staging_chunk_min, 64u << 10);
  EXPECT_EQ(s.zerocopy_max, 4u << 20);
  EXPECT_EQ(s.device_staging_min, 16u << 10);
  EXPECT_EQ(s.drive_progress_min, 256u << 10);
  EXPECT_EQ(s.grid_waves, 4u);
  EXPECT_EQ(s.grid_block_tiles_max, 4u);
  EXPECT_EQ(s.resident_max, 64u << 10);
  EXPECT_EQ(s.resident_zerocopy_max, 16u << 10);
  EXPECT_EQ(s.resident_block_max, 16u << 10);
  EXPECT_EQ(s.resident_block_sectors, 2048u);
  EXPECT_EQ(s.resident_blocks, 8u);
  EXPECT_EQ(s.resident_idle_us, 50u);
  EXPECT_EQ(s.pack_sets_alone, 2u);
}

// A profile at the XDG location fills the settings left at auto that it measured; the others
// keep the model. Each reports where its value came from.
TEST_F(ConfigTest, AutoTakesTheProfileValueWhereTheProfileHasOne) {
  const std::string path = write_file("gddt/profile.conf",
                                      "# gddt-tune profile, measured on a test GPU\n"
                                      "STAGING_CHUNK=1M\n"
                                      "GDDT_RESIDENT_IDLE_US = 100\n");
  reload_for_testing();
  EXPECT_TRUE(problems().empty()) << problems().front();
  EXPECT_EQ(profile_in_use(), path);
  EXPECT_EQ(settings().staging_chunk, 1u << 20);
  EXPECT_EQ(settings().resident_idle_us, 100u);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source_kind, Source::kProfile);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source, "gddt-tune profile " + path);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").value_text, "1M");
  EXPECT_EQ(settings().zerocopy_max, 4u << 20);
  EXPECT_EQ(row("GDDT_ZEROCOPY_MAX").source, "built-in model");
  EXPECT_EQ(settings().profile, path);
  EXPECT_EQ(row("GDDT_PROFILE").source, "default location");
}

// A value named in the config file or the environment wins over the profile; `auto` named there
// hands the setting back to the profile or the model, and the source says where auto was named.
TEST_F(ConfigTest, ExplicitValuesWinOverTheProfileAndAutoHandsBack) {
  const std::string profile = write_file("gddt/profile.conf", "STAGING_CHUNK=1M\nZEROCOPY_MAX=512K\n");
  const std::string config = write_file("gddt/gddt.conf",
                                        "STAGING_CHUNK=2M\n"
                                        "ZEROCOPY_MAX=8M\n"
                                        "RESIDENT_MAX=32K\n"
                                        "DEVICE_STAGING_MIN=auto\n");
  setenv("GDDT_ZEROCOPY_MAX", "auto", 1);
  setenv("GDDT_RESIDENT_MAX", "AUTO", 1);
  reload_for_testing();
  EXPECT_TRUE(problems().empty()) << problems().front();
  EXPECT_EQ(settings().staging_chunk, 2u << 20);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source_kind, Source::kFile);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source, "file " + config);
  EXPECT_EQ(settings().zerocopy_max, 512u << 10);
  EXPECT_EQ(row("GDDT_ZEROCOPY_MAX").source, "gddt-tune profile " + profile + " (auto in the environment)");
  EXPECT_EQ(settings().resident_max, 64u << 10);
  EXPECT_EQ(row("GDDT_RESIDENT_MAX").source, "built-in model (auto in the environment)");
  EXPECT_EQ(row("GDDT_DEVICE_STAGING_MIN").source, "built-in model (auto in file " + config + ")");
}

TEST_F(ConfigTest, ProfileIsNamedByItsVariableOrSwitchedOff) {
  write_file("gddt/profile.conf", "STAGING_CHUNK=1M\n");
  const std::string named = write_file("elsewhere/tuned.conf", "STAGING_CHUNK=2M\n");
  setenv("GDDT_PROFILE", named.c_str(), 1);
  reload_for_testing();
  EXPECT_EQ(profile_in_use(), named);
  EXPECT_EQ(settings().staging_chunk, 2u << 20);
  EXPECT_EQ(row("GDDT_PROFILE").source, "environment");
  EXPECT_EQ(profile_path_for_writing(), named);

  setenv("GDDT_PROFILE", "", 1);
  reload_for_testing();
  EXPECT_EQ(profile_in_use(), "");
  EXPECT_EQ(settings().staging_chunk, 4u << 20);
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source, "built-in model");
  EXPECT_TRUE(problems().empty()) << problems().front();

  setenv("GDDT_PROFILE", (directory_ + "/absent.conf").c_str(), 1);
  reload_for_testing();
  EXPECT_TRUE(has_problem("cannot read profile"));
  EXPECT_EQ(row("GDDT_STAGING_CHUNK").source, "built-in model");
}

TEST_F(ConfigTest, ConfigFileMayNameTheProfile) {
  const std::string profile = write_file("tuned.conf", "ZEROCOPY_MAX=1M\n");
  write_file("gddt/gddt.conf", "PROFILE=" + profile + "\n");
  reload_for_testing();
  EXPECT_EQ(profile_in_use(), profile);
  EXPECT_EQ(settings().zerocopy_max, 1u << 20);
}

// A profile holds measurements of the settings the machine decides: anything else in it is
// reported and ignored, and a bad measurement leaves the model in force.
TEST_F(ConfigTest, ProfileHoldsOnlyMeasurements) {
  const std::string path = write_file("gddt/profile.conf",
                                      "DISABLE=1\n"
                                      "STAGING_CHUNK=auto\n"
                                      "ZEROCOPY_MAX=lots\n"
                                      "RESIDENT_BLOCKS=0\n"
                                      "NOT_A_SETTING=3\n");
  reload_for_testing();
  EXPECT_FALSE(settings().disable);
  EXPECT_EQ(row("GDDT_DISABLE").source, "default");
  EXPECT_TRUE(has_problem(":1: GDDT_DISABLE is not decided by the machine"));
  EXPECT_TRUE(has_problem(":2: GDDT_STAGING_CHUNK needs a measured value"));
  EXPECT_TRUE(has_problem("GDDT_ZEROCOPY_MAX=lots (gddt-tune profile " + path + "): invalid"));
  EXPECT_TRUE(has_problem("GDDT_RESIDENT_BLOCKS=0"));
  EXPECT_TRUE(has_problem(":5: unknown setting GDDT_NOT_A_SETTING"));
  EXPECT_EQ(settings().zerocopy_max, 4u << 20);
  EXPECT_EQ(row("GDDT_ZEROCOPY_MAX").source, "built-in model");
  EXPECT_EQ(settings().resident_blocks, 8u);
}

// What gddt-tune writes (write_profile) is what the reader takes.
TEST_F(ConfigTest, WrittenProfileReadsBack) {
  const std::string path = directory_ + "/written.conf";
  std::string problem;
  ASSERT_TRUE(
      write_profile(path, "measured on a test GPU", {{"STAGING_CHUNK", 2u << 20}, {"ZEROCOPY_MAX", 65536}}, &problem))
      << problem;
  setenv("GDDT_PROFILE", path.c_str(), 1);
  reload_for_testing();
  EXPECT_TRUE(problems().empty()) << problems().front();
  EXPECT_EQ(settings().staging_chunk, 2u << 20);
  EXPECT_EQ(settings().zerocopy_max, 64u << 10);
  EXPECT_EQ(row("GDDT_ZEROCOPY_MAX").source_kind, Source::kProfile);
  EXPECT_FALSE(write_profile(path, "", {{"POOL_PINNED_MAX", 1}}, &problem));
  EXPECT_NE(problem.find("not a setting the machine decides"), std::string::npos);
}

TEST_F(ConfigTest, ProfileIsWrittenToTheXdgLocationByDefault) {
  EXPECT_EQ(profile_path_for_writing(), directory_ + "/gddt/profile.conf");
}

// `auto` is a value only of the settings the machine decides; a bad value of one keeps auto.
TEST_F(ConfigTest, AutoIsRefusedWhereTheMachineDoesNotDecide) {
  setenv("GDDT_POOL_PINNED_MAX", "auto", 1);
  setenv("GDDT_DISABLE", "auto", 1);
  setenv("GDDT_RESIDENT_MAX", "big", 1);
  reload_for_testing();
  EXPECT_EQ(settings().pool_pinned_max, 256u << 20);
  EXPECT_TRUE(has_problem("GDDT_POOL_PINNED_MAX=auto (environment): invalid size"));
  EXPECT_TRUE(has_problem("GDDT_DISABLE=auto"));
  EXPECT_TRUE(
      has_problem("GDDT_RESIDENT_MAX=big (environment): invalid size, expected bytes with an optional "
                  "K/M/G/T suffix, or auto; keeping auto"));
  EXPECT_EQ(row("GDDT_RESIDENT_MAX").source, "built-in model");
}

// Counts (blocks, waves, sectors, microseconds) are whole numbers, shown as such: 4096 is not "4K".
TEST_F(ConfigTest, CountsAreWholeNumbers) {
  setenv("GDDT_RESIDENT_BLOCKS", "2K", 1);
  setenv("GDDT_RESIDENT_IDLE_US", " 4096 ", 1);
  reload_for_testing();
  EXPECT_EQ(settings().resident_blocks, 8u);
  EXPECT_TRUE(
      has_problem("GDDT_RESIDENT_BLOCKS=2K (environment): invalid count, expected a whole number in 1..16, or auto"));
  EXPECT_EQ(settings().resident_idle_us, 4096u);
  EXPECT_EQ(row("GDDT_RESIDENT_IDLE_US").value_text, "4096");
  EXPECT_EQ(problems().size(), 1u);
}

TEST_F(ConfigTest, LowerBoundsWithoutAnUpperOne) {
  setenv("GDDT_STAGING_CHUNK_MIN", "1K", 1);
  setenv("GDDT_RESIDENT_BLOCK_SECTORS", "0", 1);
  setenv("GDDT_GRID_BLOCK_TILES_MAX", "1000000", 1);
  reload_for_testing();
  EXPECT_EQ(settings().staging_chunk_min, 64u << 10);
  EXPECT_TRUE(has_problem("GDDT_STAGING_CHUNK_MIN=1K (environment): invalid size"));
  EXPECT_TRUE(has_problem("in 4K.."));
  EXPECT_TRUE(has_problem("GDDT_RESIDENT_BLOCK_SECTORS=0"));
  EXPECT_EQ(settings().grid_block_tiles_max, 1000000u);
  EXPECT_EQ(problems().size(), 2u);
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

// The C++ enum of each enumerated row lists the row's values in the same order, one enumerator
// each ("kAuto, kDevice, kHost" for "auto|device|host").
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
