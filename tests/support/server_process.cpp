#include "server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "tiny_model.h"

extern char** environ;

namespace kvframe::test {
namespace {

std::mutex g_error_mutex;
std::string g_last_start_error;

void set_start_error(std::string message) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  g_last_start_error = std::move(message);
}

// The value of `key=` in one logfmt line: bare (up to a space) or quoted.
std::string logfmt_value(const std::string& line, const std::string& key) {
  const std::string needle = key + "=";
  size_t at = 0;
  while ((at = line.find(needle, at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ') break;  // a whole key, not the tail of another
    at += needle.size();
  }
  if (at == std::string::npos) return {};
  size_t begin = at + needle.size();
  if (begin < line.size() && line[begin] == '"') {
    size_t end = line.find('"', begin + 1);
    return line.substr(begin + 1, end == std::string::npos ? std::string::npos : end - begin - 1);
  }
  size_t end = line.find(' ', begin);
  return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

bool is_listening_line(const std::string& line) {
  return logfmt_value(line, "msg") == "listening" && !logfmt_value(line, "endpoint").empty();
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

struct ServerProcess::Impl {
  pid_t pid = -1;
  int exit_code = -1;  // once reaped
  bool reaped = false;
  std::string endpoint;
  std::thread reader;  // drains the pipe so the server never blocks on a full stderr

  mutable std::mutex mutex;
  std::condition_variable changed;
  std::string log;
  bool output_closed = false;

  void read_output(int fd) {
    std::string pending;
    char buffer[4096];
    for (;;) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::lock_guard<std::mutex> lock(mutex);
      log.append(buffer, static_cast<size_t>(n));
      pending.append(buffer, static_cast<size_t>(n));
      for (size_t eol; (eol = pending.find('\n')) != std::string::npos; pending.erase(0, eol + 1)) {
        const std::string line = pending.substr(0, eol);
        if (endpoint.empty() && is_listening_line(line)) endpoint = logfmt_value(line, "endpoint");
      }
      changed.notify_all();
    }
    ::close(fd);
    std::lock_guard<std::mutex> lock(mutex);
    output_closed = true;
    changed.notify_all();
  }

  // Waits for the process to exit; false when it has not within timeout_ms (<0: forever).
  bool reap(int timeout_ms) {
    if (reaped) return true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid, &status, timeout_ms < 0 ? 0 : WNOHANG);
      if (r == pid) {
        reaped = true;
        exit_code = exit_code_of(status);
        break;
      }
      if (r < 0 && errno != EINTR) {  // not our child any more (someone else reaped it)
        reaped = true;
        break;
      }
      if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (reader.joinable()) reader.join();  // the pipe closes with the process
    return true;
  }
};

ServerProcess::ServerProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ServerProcess::~ServerProcess() {
  if (!impl_->reaped) kill();
}

std::unique_ptr<ServerProcess> ServerProcess::start(const ServerProcessOptions& options) {
  const std::string binary = kvframe_serve_path();
  if (binary.empty()) {
    set_start_error("no kvframe-serve: set KVFRAME_SERVE or build with KVFRAME_TORCH=ON");
    return nullptr;
  }
  const std::string model = options.model_path.empty() ? tiny_model_file() : options.model_path;
  if (model.empty()) {
    set_start_error("could not write the tiny model");
    return nullptr;
  }
  std::vector<std::string> args = {binary, "--model", model, "--bind", options.bind, "--log-level", "info"};
  // A tiny model needs no more than one thread, and tests run side by side
  // on few cores: more would only fight the other tests for them.
  if (options.model_path.empty()) args.insert(args.end(), {"--threads", "1"});
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    set_start_error(std::string("pipe2: ") + std::strerror(errno));
    return nullptr;
  }
  // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: a test
  // program killed mid-run (a ctest timeout) takes its server with it instead
  // of leaving it to load the machine. Between fork and exec only
  // async-signal-safe calls.
  const pid_t parent = ::getpid();
  auto impl = std::make_unique<Impl>();
  impl->pid = ::fork();
  if (impl->pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::execve(binary.c_str(), argv.data(), environ);
    static const char kExecFailed[] = "kvframe-serve could not be executed (execve failed)\n";
    if (::write(STDERR_FILENO, kExecFailed, sizeof kExecFailed - 1) < 0) ::_exit(127);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(fds[1]);
  if (impl->pid < 0) {
    ::close(fds[0]);
    set_start_error(std::string("fork: ") + std::strerror(fork_errno));
    return nullptr;
  }
  impl->reader = std::thread([raw = impl.get(), fd = fds[0]] { raw->read_output(fd); });
  std::unique_ptr<ServerProcess> server(new ServerProcess(std::move(impl)));

  Impl& state = *server->impl_;
  std::unique_lock<std::mutex> lock(state.mutex);
  const bool listening = state.changed.wait_for(lock, std::chrono::milliseconds(options.start_timeout_ms), [&] {
    return !state.endpoint.empty() || state.output_closed;
  });
  if (listening && !state.endpoint.empty()) return server;
  lock.unlock();
  server->kill();
  set_start_error(std::string(listening ? "kvframe-serve exited before listening" : "no listening line in time") +
                  " (" + binary + " --bind " + options.bind + "); its output:\n" + server->log());
  return nullptr;
}

std::string ServerProcess::last_start_error() {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  return g_last_start_error;
}

const std::string& ServerProcess::endpoint() const { return impl_->endpoint; }
pid_t ServerProcess::pid() const { return impl_->pid; }
bool ServerProcess::running() { return !impl_->reap(0); }

int ServerProcess::stop(int signal, int timeout_ms) {
  if (!impl_->reaped) ::kill(impl_->pid, signal);
  return impl_->reap(timeout_ms) ? impl_->exit_code : -1;
}

void ServerProcess::kill() {
  if (impl_->reaped) return;
  ::kill(impl_->pid, SIGKILL);
  impl_->reap(-1);
}

std::string ServerProcess::log() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->log;
}

std::string kvframe_serve_path() {
  if (const char* from_env = std::getenv("KVFRAME_SERVE"); from_env && *from_env) return from_env;
#ifdef KVFRAME_SERVE_BUILT
  return KVFRAME_SERVE_BUILT;
#else
  return {};
#endif
}

namespace {

// The directory holding the tiny model, removed when the test program exits.
struct TinyModelDir {
  std::filesystem::path dir;
  std::string file;
  ~TinyModelDir() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
};

}  // namespace

std::string tiny_model_file() {
  static TinyModelDir model;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "kvframe-tiny-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return;
    model.dir = pattern;
    TinyModelSpec spec;
    spec.n_ctx = 4096;  // the server sizes sessions from the model's context: leave room for frames
    const std::vector<uint8_t> bytes = tiny_model_bytes(spec);
    const std::filesystem::path path = model.dir / "tiny.gguf";
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (out.flush()) model.file = path.string();
  });
  return model.file;
}

}  // namespace kvframe::test
