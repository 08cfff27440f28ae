#include "child_job.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "checks.hpp"
#include "mpi_env.hpp"

namespace gddt::bench {
namespace {

std::vector<std::string> launcher(const Options& options) {
  if (options.child_launcher.empty()) return default_launcher();
  std::vector<std::string> words;
  std::istringstream stream(options.child_launcher);
  std::string word;
  while (stream >> word) words.push_back(word);
  return words;
}

std::string own_executable() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) die("cannot find this program's path in /proc/self/exe");
  return std::string(path, static_cast<std::size_t>(length));
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::string file_safe(std::string text) {
  for (char& c : text) {
    if (c == ' ' || c == ':' || c == '/') c = '-';
  }
  return text;
}

struct Exit {
  bool timed_out = false;
  int status = 0;  // as waitpid reports it
};

// Waits for the job, ending its whole process group (the launcher and anything it started
// on this node) when it overruns.
Exit wait_for(pid_t job, double timeout_seconds) {
  Exit result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    const pid_t done = waitpid(job, &result.status, WNOHANG);
    if (done == job) return result;
    if (done < 0) die("waitpid on a child job failed");
    if (std::chrono::steady_clock::now() > deadline && !result.timed_out) {
      result.timed_out = true;
      kill(-job, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(5));
      kill(-job, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string describe_exit(const Exit& exit, double timeout_seconds) {
  if (exit.timed_out) return "timed out after " + std::to_string(static_cast<int>(timeout_seconds)) + " s";
  if (WIFSIGNALED(exit.status)) return "launcher killed by signal " + std::to_string(WTERMSIG(exit.status));
  if (WIFEXITED(exit.status) && WEXITSTATUS(exit.status) != 0) {
    return "launcher exit status " + std::to_string(WEXITSTATUS(exit.status));
  }
  return "";
}

// The last non-blank line of a child's log, so that a report read elsewhere says why it failed.
std::string last_line_of(const std::string& path) {
  std::ifstream log(path);
  std::string line, last;
  while (std::getline(log, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 200 ? last.substr(0, 200) + "..." : last;
}

}  // namespace

ChildReportWriter::ChildReportWriter(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
  if (file_ == nullptr) die("cannot write the child job's report " + path);
}

ChildReportWriter::~ChildReportWriter() { std::fclose(file_); }

void ChildReportWriter::begin(const PointKey& point) {
  std::fprintf(file_, "begin %zu\n", point.packed);
  std::fflush(file_);
}

void ChildReportWriter::done(const PointKey& point, const Measurement& measurement) {
  std::fprintf(file_, "point %zu %.9g %.9g %s\n", point.packed, measurement.latency_us, measurement.bandwidth_gbs,
               measurement.status.empty() ? "ok" : measurement.status == "wrong data" ? "wrong" : "n/a");
  std::fflush(file_);
}

std::string child_launcher_text(const Options& options) {
  std::string text;
  for (const std::string& word : launcher(options)) text += (text.empty() ? "" : " ") + word;
  return text;
}

ChildJob run_child_job(const Options& options, Method method, const MemoryPair& memory, const TableSpec& table,
                       const std::vector<PointKey>& points, const std::string& work_directory) {
  const std::string stem =
      work_directory + "/" + file_safe(std::string(method_name(method)) + "-" + memory.name() + "-" + table.name());
  const std::string report_path = stem + ".report";
  const std::string log_path = stem + ".log";

  std::vector<std::string> command = launcher(options);
  command.push_back(own_executable());
  for (std::string& argument :
       child_worker_arguments(options, method, memory, table.family, table.vector_block, report_path)) {
    command.push_back(std::move(argument));
  }
  std::vector<std::string> environment = child_job_environment();
  std::vector<char*> argv = c_strings(command);
  std::vector<char*> envp = c_strings(environment);

  posix_spawn_file_actions_t files;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t job = 0;
  const int spawned = posix_spawnp(&job, argv[0], &files, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);

  ChildJob result;
  Exit exit;
  if (spawned != 0) {
    result.trouble = "cannot start '" + command[0] + "' (" + std::to_string(spawned) + "); set --child-launcher";
  } else {
    exit = wait_for(job, options.child_timeout);
    result.trouble = describe_exit(exit, options.child_timeout);
  }

  std::vector<std::size_t> begun;
  std::vector<std::pair<std::size_t, Measurement>> finished;
  std::ifstream report(report_path);
  std::string line;
  while (std::getline(report, line)) {
    std::istringstream fields(line);
    std::string kind;
    std::size_t packed = 0;
    fields >> kind >> packed;
    if (kind == "begin") {
      begun.push_back(packed);
    } else if (kind == "point") {
      Measurement measurement;
      std::string latency, bandwidth, status;
      fields >> latency >> bandwidth >> status;
      measurement.latency_us = std::strtod(latency.c_str(), nullptr);
      measurement.bandwidth_gbs = std::strtod(bandwidth.c_str(), nullptr);
      measurement.status = status == "ok" ? "" : status == "wrong" ? "wrong data" : "n/a";
      finished.emplace_back(packed, measurement);
    }
  }
  for (const PointKey& point : points) {
    Measurement measurement;
    measurement.status = "not run";
    for (const auto& [packed, measured] : finished) {
      if (packed == point.packed) measurement = measured;
    }
    const bool was_begun = std::find(begun.begin(), begun.end(), point.packed) != begun.end();
    if (measurement.status == "not run" && was_begun) measurement.status = exit.timed_out ? "timeout" : "crashed";
    if (measurement.status == "crashed" || measurement.status == "timeout") {
      result.trouble += (result.trouble.empty() ? "" : ", ") + measurement.status + " at packed " +
                        format_size(point.packed);
    }
    result.points.emplace_back(point, measurement);
  }
  if (!result.trouble.empty()) {
    const std::string last = last_line_of(log_path);
    result.trouble += "; log: " + log_path + (last.empty() ? "" : " (last line: " + last + ")");
  } else {
    std::remove(log_path.c_str());
    std::remove(report_path.c_str());
  }
  return result;
}

}  // namespace gddt::bench
