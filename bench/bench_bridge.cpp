// bench_bridge: what the bridge (ZeroMQ + flatbuffers, the server's threads
// and queues, the native client) costs a game, next to the engine it fronts.
//
//   overhead    one client, one session: a merge-patch Frame then a Query
//               (one greedy token), awaited, --iterations times. The round
//               trip is timed by the game's side (send to Result in hand);
//               the engine's own time comes back in the Result's report
//               (engine_ms: the frame's partition plus the query). Overhead =
//               round trip - engine time: serialization, both sockets, the
//               server's I/O and engine threads' hand-offs, the client's
//               thread and poll queue.
//   floor       bare ZeroMQ on the same machine in the same run: a DEALER
//               sending a message of the Query's size to a ROUTER that echoes
//               it, over tcp loopback. What no bridge on ZeroMQ can go under.
//   throughput  1, 4, 16... clients, a session each, streaming merge patches
//               of a MOBA match (--frame-kb KiB frames) with --window frames
//               in flight, for --seconds: acked frames/s per session and in
//               all, each beside the same frames pushed through json_blocker
//               on one thread in this process just before (the engine
//               thread's own work per frame, without any bridge): the ceiling
//               the bridge is held to.
//
// The server is a real kvframe-serve process on loopback, started here on a
// tiny random-weight model (tests/support), or --server ENDPOINT for one that
// is already running.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gnuplot_plot.h"
#include <zmq.hpp>

#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/client/kvframe_client.hpp"
#include "kvframe/json_blocker/frame_stream.h"
#include "kvframe/json_blocker/rules.h"
#include "moba/moba_stream.h"
#include "sample_stats.h"
#include "server_process.h"

namespace {

namespace jb = kvframe::json_blocker;
namespace moba = kvframe::examples::moba;
using kvframe::bench::mean;
using kvframe::bench::percentile;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string server;  // empty: start kvframe-serve here
  int iterations = 2000;
  int warmup = 100;
  std::vector<int> clients{1, 4, 16};
  double seconds = 3;
  int window = 8;
  int frame_kb = 64;
  std::string plot = "bench_bridge.png";
  std::string json;
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_bridge: %s: %s\n", what.c_str(), kvf_client_last_error(nullptr));
  std::exit(kvframe::kExitFailed);
}

kvf_client* connect(const std::string& endpoint) {
  kvf_client_params params = kvframe::client::defaults(kvf_client_params_init);
  params.endpoint = endpoint.c_str();
  params.client_name = "bench_bridge";
  kvf_client* client = nullptr;
  if (kvf_client_connect(&params, &client) != KVF_OK) fail("cannot connect to " + endpoint);
  return client;
}

kvf_session open_session(kvf_client* client, const std::string& rules_json) {
  kvf_session_params params = kvframe::client::defaults(kvf_session_params_init);
  params.game_id = "bench_bridge";
  params.rules_json = rules_json.empty() ? nullptr : rules_json.c_str();
  kvf_session session = 0;
  if (kvf_session_open(client, &params, &session) != KVF_OK) fail("cannot open a session");
  return session;
}

// ---- overhead -------------------------------------------------------------

struct OverheadSamples {
  std::vector<double> round_trip, engine, server, overhead;  // ms
  std::vector<double> floor;  // bare ZeroMQ round trips, ms
};

// A small table state (fits a tiny model's context) whose pot and clock move
// every frame, as a card game's do.
std::string table_frame(int i) {
  return R"({"hand":)" + std::to_string(i) + R"(,"street":"flop","board":["Ah","7c","2d"],"pot":)" +
         std::to_string(100 + i % 50) + R"(,"to_act":"p2","chips":{"p1":{"bet":20,"remain":980},"p2":{"bet":0,"remain":)" +
         std::to_string(1000 - i % 40) + R"(}},"legal":["fold","call","raise"]})";
}

std::string table_patch(int i) {
  return R"({"hand":)" + std::to_string(i) + R"(,"pot":)" + std::to_string(100 + i % 50) +
         R"(,"chips":{"p2":{"remain":)" + std::to_string(1000 - i % 40) + "}}}";
}

OverheadSamples measure_overhead(const std::string& endpoint, const Options& o) {
  kvf_client* client = connect(endpoint);
  const kvf_session session = open_session(client, "");
  const std::string first = table_frame(0);
  if (kvf_send_frame(client, session, 1, KVF_FRAME_WHOLE, first.data(), first.size(), nullptr, nullptr, nullptr) !=
      KVF_OK) {
    fail("cannot send the first frame");
  }
  kvf_query_params query = kvframe::client::defaults(kvf_query_params_init);
  query.instruction = "Act for p2.";
  query.max_tokens = 1;

  OverheadSamples s;
  const int total = o.warmup + o.iterations;
  for (int i = 1; i <= total; ++i) {
    const std::string patch = table_patch(i);
    const Clock::time_point t0 = Clock::now();
    uint64_t request = 0;
    if (kvf_send_frame(client, session, static_cast<uint64_t>(i) + 1, KVF_FRAME_MERGE_PATCH, patch.data(),
                       patch.size(), nullptr, nullptr, nullptr) != KVF_OK ||
        kvf_query(client, session, &query, nullptr, nullptr, &request) != KVF_OK) {
      fail("cannot send frame " + std::to_string(i));
    }
    kvf_event* event = nullptr;
    while (kvf_poll(client, -1, &event) == KVF_OK) {
      const bool mine = kvf_event_request_id(event) == request;
      if (kvf_event_type_of(event) == KVF_EVENT_ERROR) {
        std::fprintf(stderr, "bench_bridge: frame %d: %s\n", i, kvf_event_text(event, nullptr));
        std::exit(kvframe::kExitFailed);
      }
      if (mine) break;
      kvf_event_free(event);
    }
    const double round_trip = ms_since(t0);
    kvf_report report{};
    report.struct_size = sizeof report;
    kvf_event_report(event, &report);
    kvf_event_free(event);
    if (i <= o.warmup) continue;
    s.round_trip.push_back(round_trip);
    s.engine.push_back(report.engine_ms);
    s.server.push_back(report.server_ms);
    s.overhead.push_back(round_trip - report.engine_ms);
    if (i % 500 == 0) std::fprintf(stderr, "\roverhead: %d / %d round trips", i - o.warmup, o.iterations);
  }
  std::fprintf(stderr, "\n");
  kvf_client_close(client);
  return s;
}

// Bare ZeroMQ round trips of `bytes`-byte messages: a ROUTER echo thread and
// a DEALER, each with its own context (as server and client have), over tcp
// loopback.
std::vector<double> bare_zeromq_round_trips(int iterations, std::size_t bytes) {
  zmq::context_t server_context, client_context;
  zmq::socket_t router(server_context, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::thread echo([&] {
    for (int i = 0; i < iterations; ++i) {
      zmq::message_t id, body;
      if (!router.recv(id) || !router.recv(body)) return;
      router.send(id, zmq::send_flags::sndmore);
      router.send(body, zmq::send_flags::none);
    }
  });
  zmq::socket_t dealer(client_context, zmq::socket_type::dealer);
  dealer.connect(endpoint);
  const std::string payload(bytes, 'q');
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    const Clock::time_point t0 = Clock::now();
    dealer.send(zmq::buffer(payload), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer.recv(reply)) break;
    ms.push_back(ms_since(t0));
  }
  echo.join();
  return ms;
}

// ---- throughput -----------------------------------------------------------

struct FrameSet {
  std::string whole;                // frame 0
  std::vector<std::string> patches; // merge patches 1..n-1
  std::string rules_json;
};

FrameSet moba_frames(int frame_kb, int count) {
  FrameSet set;
  moba::StreamGenerator generator(moba::params_for_bytes(static_cast<std::size_t>(frame_kb) * 1024));
  set.whole = generator.next().json;
  for (int i = 1; i < count; ++i) set.patches.push_back(generator.next().merge_patch);
  set.rules_json = read_file(KVFRAME_MOBA_RULES_FILE);
  return set;
}

// The frame sent as frame number n (from 1): the whole frame, then its
// patches, then the whole frame again, so a stream of any length is valid.
std::pair<const std::string*, kvf_frame_format> frame_at(const FrameSet& set, uint64_t n) {
  const std::size_t cycle = set.patches.size() + 1;
  const std::size_t k = (n - 1) % cycle;
  if (k == 0) return {&set.whole, KVF_FRAME_WHOLE};
  return {&set.patches[k - 1], KVF_FRAME_MERGE_PATCH};
}

// json_blocker alone on this thread: the engine thread's per-frame work.
double in_process_frames_per_second(const FrameSet& set, double seconds) {
  auto rules = jb::parse_rules(set.rules_json);
  if (!rules) {
    std::fprintf(stderr, "bench_bridge: moba rules: %s\n", rules.error().message.c_str());
    std::exit(kvframe::kExitUsage);
  }
  jb::FrameStream stream(*rules);
  const Clock::time_point t0 = Clock::now();
  uint64_t n = 0;
  while (ms_since(t0) < seconds * 1000) {
    const auto [text, format] = frame_at(set, ++n);
    const auto diff = format == KVF_FRAME_WHOLE ? stream.push_whole(*text)
                                                : stream.push_patch(*text, jb::PatchFormat::kMergePatch);
    if (!diff) {
      std::fprintf(stderr, "bench_bridge: frame %llu: %s\n", static_cast<unsigned long long>(n),
                   diff.error().message.c_str());
      std::exit(kvframe::kExitFailed);
    }
  }
  return static_cast<double>(n) / (ms_since(t0) / 1000);
}

// One client streaming frames with `window` in flight; acks counted by callback.
struct Streamer {
  std::mutex mutex;
  std::condition_variable acked;
  int in_flight = 0;
  uint64_t applied = 0, superseded = 0, errors = 0;

  static void on_ack(const kvf_event* event, void* user) {
    auto* self = static_cast<Streamer*>(user);
    std::lock_guard<std::mutex> lock(self->mutex);
    --self->in_flight;
    if (kvf_event_type_of(event) == KVF_EVENT_ERROR) {
      ++self->errors;
    } else if (kvf_event_superseded(event)) {
      ++self->superseded;
    } else {
      ++self->applied;
    }
    self->acked.notify_one();
  }
};

struct ThroughputRow {
  int clients = 0;
  double frames_per_second = 0, per_session = 0;  // applied (not superseded) frames
  double superseded_per_second = 0;
  double alone = 0;  // json_blocker alone, measured just before this row
  uint64_t errors = 0;
};

ThroughputRow measure_throughput(const std::string& endpoint, const FrameSet& set, int clients, const Options& o) {
  std::vector<std::unique_ptr<Streamer>> streamers;
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  Clock::time_point t0;
  for (int c = 0; c < clients; ++c) streamers.push_back(std::make_unique<Streamer>());
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      Streamer& st = *streamers[static_cast<std::size_t>(c)];
      kvf_client* client = connect(endpoint);
      const kvf_session session = open_session(client, set.rules_json);
      while (!go.load()) std::this_thread::yield();
      for (uint64_t n = 1; ms_since(t0) < o.seconds * 1000; ++n) {
        {
          std::unique_lock<std::mutex> lock(st.mutex);
          st.acked.wait(lock, [&] { return st.in_flight < o.window; });
          ++st.in_flight;
        }
        const auto [text, format] = frame_at(set, n);
        if (kvf_send_frame(client, session, n, format, text->data(), text->size(), &Streamer::on_ack, &st,
                           nullptr) != KVF_OK) {
          fail("cannot send a frame");
        }
      }
      std::unique_lock<std::mutex> lock(st.mutex);
      st.acked.wait(lock, [&] { return st.in_flight == 0; });
      lock.unlock();
      kvf_client_close(client);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every client connected
  t0 = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  const double seconds = ms_since(t0) / 1000;
  ThroughputRow row;
  row.clients = clients;
  uint64_t applied = 0, superseded = 0;
  for (const auto& st : streamers) {
    applied += st->applied;
    superseded += st->superseded;
    row.errors += st->errors;
  }
  row.frames_per_second = static_cast<double>(applied) / seconds;
  row.superseded_per_second = static_cast<double>(superseded) / seconds;
  row.per_session = row.frames_per_second / clients;
  return row;
}

// ---- output ---------------------------------------------------------------

std::vector<double> percentile_points() { return {50, 75, 90, 95, 99, 99.9}; }

void plot(const Options& o, const OverheadSamples& s, const std::vector<ThroughputRow>& rows) {
  if (o.plot.empty()) return;
  std::vector<kvframe::plot::PlotSeries> series(4);
  series[0].title = "round trip (game side)";
  series[1].title = "engine (reported by the server)";
  series[2].title = "bridge overhead = round trip - engine";
  series[3].title = "bare ZeroMQ echo round trip (floor)";
  series[3].style = "linespoints lw 2 pt 7 dt 2";
  for (double p : percentile_points()) {
    const std::vector<double>* sets[] = {&s.round_trip, &s.engine, &s.overhead, &s.floor};
    for (int k = 0; k < 4; ++k) {
      series[static_cast<std::size_t>(k)].x.push_back(p);
      series[static_cast<std::size_t>(k)].y.push_back(1000 * percentile(*sets[k], p));
    }
  }
  kvframe::plot::PlotOptions options;
  options.title = "Frame + Query round trip on loopback, tiny model (" + std::to_string(s.round_trip.size()) + " samples)";
  options.x.label = "percentile";
  options.y.label = "microseconds";
  options.y.log_base = 10;
  options.y.range = "10:100000";  // room above the curves for the key
  options.key = "top left";
  if (!kvframe::plot::write_plot(o.plot, options, series)) {
    std::fprintf(stderr, "bench_bridge: no plot written (is gnuplot installed?)\n");
  }
  kvframe::plot::PlotSeries bridge{"through the bridge (applied frames/s, all sessions)", {}, {}};
  kvframe::plot::PlotSeries alone{"json_blocker alone, one thread (no bridge)", {}, {}};
  for (const ThroughputRow& r : rows) {
    bridge.x.push_back(r.clients);
    bridge.y.push_back(r.frames_per_second);
    alone.x.push_back(r.clients);
    alone.y.push_back(r.alone);
  }
  alone.style = "lines lw 2 dt 2";
  kvframe::plot::PlotOptions t;
  t.title = "Sustained frames/s, " + std::to_string(o.frame_kb) + " KiB MOBA frames as merge patches";
  t.x.label = "clients (one session each)";
  t.x.log_base = 2;
  t.y.label = "frames/s";
  t.y.range = "0:*";
  t.key = "bottom right";
  const std::string path = o.plot.substr(0, o.plot.rfind('.')) + "_throughput.png";
  kvframe::plot::write_plot(path, t, {bridge, alone});
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_bridge: the bridge's overhead per Frame + Query round trip, and sustained frames/s, "
               "against a real kvframe-serve on loopback"};
  app.add_option("--server", o.server, "an already running kvframe-serve (default: start one on a tiny model)");
  app.add_option("--iterations", o.iterations, "timed Frame + Query round trips")->check(CLI::Range(10, 1000000));
  app.add_option("--warmup", o.warmup, "untimed round trips first")->check(CLI::Range(0, 100000));
  app.add_option("--clients", o.clients, "client counts for the throughput runs")->delimiter(',');
  app.add_option("--seconds", o.seconds, "length of each throughput run")->check(CLI::Range(0.1, 600.0));
  app.add_option("--window", o.window, "frames in flight per client")->check(CLI::Range(1, 10000));
  app.add_option("--frame-kb", o.frame_kb, "MOBA frame size for the throughput runs (KiB)")->check(CLI::Range(16, 16384));
  app.add_option("--plot", o.plot, "PNG of the overhead percentiles (and FILE_throughput.png); '' for none");
  app.add_option("--json", o.json, "also write the results as JSON");
  app.footer("exit codes: 0 ok, 1 usage, 3 the server could not be started or a bridge call failed");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;

  std::unique_ptr<kvframe::test::ServerProcess> server;
  std::string endpoint = o.server;
  if (endpoint.empty()) {
    std::fprintf(stderr, "starting kvframe-serve on a tiny random-weight model...\n");
    server = kvframe::test::ServerProcess::start({});
    if (!server) {
      std::fprintf(stderr, "bench_bridge: %s\n", kvframe::test::ServerProcess::last_start_error().c_str());
      return kvframe::kExitFailed;
    }
    endpoint = server->endpoint();
  }

  OverheadSamples s = measure_overhead(endpoint, o);
  s.floor = bare_zeromq_round_trips(o.iterations, 160);  // about a Query's size
  std::printf("\nFrame (merge patch) + Query (1 token) round trips, %zu samples, microseconds\n", s.round_trip.size());
  std::printf("%-40s %9s %9s %9s %9s\n", "", "p50", "p90", "p99", "p99.9");
  const std::pair<const char*, const std::vector<double>*> lines[] = {
      {"round trip (game side)", &s.round_trip},
      {"engine (Result.report.engine_ms)", &s.engine},
      {"server (receipt to reply, incl. engine)", &s.server},
      {"bridge overhead = round trip - engine", &s.overhead},
      {"bare ZeroMQ echo round trip (floor)", &s.floor}};
  for (const auto& [name, v] : lines) {
    std::printf("%-40s %9.0f %9.0f %9.0f %9.0f\n", name, 1000 * percentile(*v, 50), 1000 * percentile(*v, 90),
                1000 * percentile(*v, 99), 1000 * percentile(*v, 99.9));
  }

  // Each bridge run right after a json_blocker-alone run: this machine is
  // shared and noisy, so each row's ratio compares neighbours in time.
  const FrameSet set = moba_frames(o.frame_kb, 100);
  std::vector<ThroughputRow> rows;
  for (int clients : o.clients) {
    std::fprintf(stderr, "throughput: json_blocker alone, then %d client(s), %.1f s each...\n", clients, o.seconds);
    const double alone = in_process_frames_per_second(set, o.seconds);
    rows.push_back(measure_throughput(endpoint, set, clients, o));
    rows.back().alone = alone;
  }
  std::printf("\nSustained frames/s: %d KiB MOBA frames (a whole frame, then merge patches), %d in flight per client\n",
              o.frame_kb, o.window);
  std::printf("applied: acked and applied by the engine; superseded: acked, skipped for a newer whole frame;\n"
              "alone: json_blocker on one thread in this process on the same frames, run just before the row\n");
  std::printf("%-8s %12s %12s %12s %12s %10s %7s\n", "clients", "applied/s", "per session", "superseded/s",
              "alone/s", "vs alone", "errors");
  for (const ThroughputRow& r : rows) {
    std::printf("%-8d %12.0f %12.0f %12.0f %12.0f %10.2f %7llu\n", r.clients, r.frames_per_second, r.per_session,
                r.superseded_per_second, r.alone, r.frames_per_second / r.alone,
                static_cast<unsigned long long>(r.errors));
  }

  plot(o, s, rows);
  if (!o.json.empty()) {
    nlohmann::json out;
    for (const auto& [name, v] : lines) {
      out["overhead_ms"][name] = {{"p50", percentile(*v, 50)}, {"p99", percentile(*v, 99)}, {"mean", mean(*v)}};
    }
    for (const ThroughputRow& r : rows) {
      out["throughput"].push_back({{"clients", r.clients}, {"applied_per_second", r.frames_per_second},
                                   {"per_session", r.per_session}, {"superseded_per_second", r.superseded_per_second},
                                   {"alone_per_second", r.alone}, {"errors", r.errors}});
    }
    std::ofstream(o.json) << out.dump(2) << "\n";
  }
  if (server) server->stop();
  return kvframe::kExitOk;
}
