// The measured choice between a functor's bf16 table and direct math (detail/table_choice.cuh),
// without a GPU: the decision from timings per element (the margin, the fastest sample, sizes
// that differ), and the measurement's course (which calls are timed, which path each runs, the
// default until the decision, abandoned and failed timings), including timings that come in out of
// order.
#include <cuact/detail/table_choice.cuh>

#include <cstddef>
#include <random>
#include <vector>

#include "catch.hpp"

using cuact::detail::decide_table_path;
using cuact::detail::table_choice;
using cuact::detail::table_choice_margin;
using cuact::detail::table_choice_samples;
using cuact::detail::table_path;
using cuact::detail::table_timing;

namespace {
constexpr std::size_t n = std::size_t(1) << 27;

/// decide_table_path over one timing per path, repeated table_choice_samples times.
table_path decide_one(table_timing direct, table_timing table) {
  std::vector<table_timing> d(table_choice_samples, direct), t(table_choice_samples, table);
  return decide_table_path(d.data(), t.data(), table_choice_samples);
}
}  // namespace

TEST_CASE("table choice: the table only where faster per element by the margin",
          "[cpu][table_choice]") {
  STATIC_REQUIRE(table_choice_samples >= 2);
  STATIC_REQUIRE(table_choice_margin > 0);
  STATIC_REQUIRE(table_choice_margin < 0.5);
  // a long functor: direct math at half the table's speed
  CHECK(decide_one({2.0, n}, {1.0, n}) == table_path::table);
  // a light one: direct math as fast or faster
  CHECK(decide_one({1.0, n}, {1.0, n}) == table_path::direct);
  CHECK(decide_one({0.97, n}, {1.0, n}) == table_path::direct);
  // faster, but within the margin: direct math
  const double just_inside = 1.0 / (1 + table_choice_margin) + 1e-6;
  const double just_outside = 1.0 / (1 + table_choice_margin) - 1e-6;
  CHECK(decide_one({1.0, n}, {just_inside, n}) == table_path::direct);
  CHECK(decide_one({1.0, n}, {just_outside, n}) == table_path::table);
  // per element: the table's call computed twice the elements in less than twice the time
  CHECK(decide_one({1.0, n}, {1.8, 2 * n}) == table_path::table);
  CHECK(decide_one({1.0, 2 * n}, {0.6, n}) == table_path::direct);
  // timings that say nothing count as infinitely slow
  CHECK(decide_one({1.0, n}, {0.5, 0}) == table_path::direct);
  CHECK(decide_one({1.0, n}, {-1.0, n}) == table_path::direct);
  CHECK(decide_one({1.0, 0}, {1.0, n}) == table_path::table);
  CHECK(decide_one({1.0, 0}, {1.0, 0}) == table_path::direct);
}

TEST_CASE("table choice: each path's fastest timing counts", "[cpu][table_choice]") {
  std::vector<table_timing> direct(table_choice_samples, table_timing{1.0, n});
  std::vector<table_timing> table(table_choice_samples, table_timing{1.0, n});
  // one slow first call of direct math (module loading) does not hand the table the choice
  direct[0] = {50.0, n};
  CHECK(decide_table_path(direct.data(), table.data(), table_choice_samples) == table_path::direct);
  // nor one slow call of the table (its buffer's allocation) take it away from a long functor
  direct.assign(table_choice_samples, table_timing{2.0, n});
  table.assign(table_choice_samples, table_timing{1.0, n});
  table[0] = {50.0, n};
  CHECK(decide_table_path(direct.data(), table.data(), table_choice_samples) == table_path::table);
}

TEST_CASE("table choice: timed calls alternate, direct first; untimed ones take the table",
          "[cpu][table_choice]") {
  table_choice choice;
  CHECK_FALSE(choice.decided());
  CHECK(choice.path() == table_path::table);
  std::vector<int> claimed;
  for (int k = 0; k < table_choice::timed_calls; ++k) {
    const int got = choice.claim();
    REQUIRE(got == k);
    CHECK(table_choice::path_of(got) == (k % 2 == 0 ? table_path::direct : table_path::table));
    CHECK_FALSE(choice.pending(got));  // not before it ran
    claimed.push_back(got);
  }
  CHECK(choice.claim() == -1);  // every timed call started: the others take the default
  CHECK(choice.path() == table_path::table);
  for (int k : claimed) choice.ran(k);
  // timings in reverse order; the decision comes with the last, not before
  for (int k = table_choice::timed_calls - 1; k >= 0; --k) {
    CHECK_FALSE(choice.decided());
    REQUIRE(choice.pending(k));
    const bool table = table_choice::path_of(k) == table_path::table;
    choice.completed(k, table ? 1.0 : 2.0, n);
  }
  CHECK(choice.decided());
  CHECK(choice.path() == table_path::table);
  CHECK(choice.claim() == -1);
  CHECK_FALSE(choice.pending(0));
  // a timing after the decision changes nothing
  choice.completed(0, 0.001, n);
  CHECK(choice.path() == table_path::table);
}

TEST_CASE("table choice: a light functor's timings decide direct math", "[cpu][table_choice]") {
  table_choice choice;
  for (int k = 0; k < table_choice::timed_calls; ++k) {
    REQUIRE(choice.claim() == k);
    choice.ran(k);
    const bool table = table_choice::path_of(k) == table_path::table;
    // sizes differ between calls: the time per element decides
    const std::size_t elements = n + std::size_t(k) * 1000;
    choice.completed(k, (table ? 1.02 : 1.0) * double(elements) / double(n), elements);
  }
  CHECK(choice.decided());
  CHECK(choice.path() == table_path::direct);
}

TEST_CASE("table choice: abandoned timings are taken again, failed ones decide the table",
          "[cpu][table_choice]") {
  table_choice choice;
  REQUIRE(choice.claim() == 0);
  REQUIRE(choice.claim() == 1);
  choice.abandoned(0);  // its path returned the caller's error
  CHECK_FALSE(choice.pending(0));
  CHECK(choice.claim() == 0);  // claimed again, before the later ones
  CHECK(choice.claim() == 2);
  // a timing of a call that never ran is ignored
  choice.completed(2, 1.0, n);
  CHECK_FALSE(choice.pending(2));
  choice.ran(2);
  CHECK(choice.pending(2));
  // abandoning or running a call twice, or one never claimed, changes nothing
  choice.abandoned(2);
  CHECK(choice.pending(2));
  choice.ran(3);
  CHECK_FALSE(choice.pending(3));
  choice.abandoned(-1);
  choice.ran(table_choice::timed_calls);
  CHECK_FALSE(choice.decided());
  choice.failed();
  CHECK(choice.decided());
  CHECK(choice.path() == table_path::table);
  CHECK(choice.claim() == -1);
  CHECK_FALSE(choice.pending(2));
}

TEST_CASE("table choice: interleaved calls decide as the pure decision over their timings",
          "[cpu][table_choice]") {
  // Calls that claim, run and complete in random interleavings (a poll sees some timings in,
  // others not yet), with random sizes and times: the decision equals decide_table_path over
  // what the timed calls took, and until it every untimed call took the table.
  std::mt19937 random(20240611u);
  for (int trial = 0; trial < 2000; ++trial) {
    table_choice choice;
    table_timing taken[table_choice::timed_calls] = {};
    std::vector<int> running, waiting;
    const double direct_speed = std::uniform_real_distribution<double>(0.4, 1.2)(random);
    int calls = 0;
    while (!choice.decided() && calls < 1000) {
      ++calls;
      // a poll: some of the timings that ran are in
      for (std::size_t i = 0; i < waiting.size();) {
        if (random() % 2 == 0) {
          const int k = waiting[i];
          choice.completed(k, taken[k].elapsed_ms, taken[k].elements);
          waiting.erase(waiting.begin() + std::ptrdiff_t(i));
        } else {
          ++i;
        }
      }
      if (choice.decided()) break;
      if (const int k = choice.claim(); k >= 0) {
        const std::size_t elements = n + random() % 100000;
        const bool table = table_choice::path_of(k) == table_path::table;
        const double per_element = (table ? 1.0 : direct_speed) *
                                   std::uniform_real_distribution<double>(1.0, 1.05)(random);
        taken[k] = {per_element * double(elements) / double(n), elements};
        running.push_back(k);
      } else {
        CHECK(choice.path() == table_path::table);
      }
      // some running calls end
      for (std::size_t i = 0; i < running.size();) {
        if (random() % 3 != 0) {
          choice.ran(running[i]);
          waiting.push_back(running[i]);
          running.erase(running.begin() + std::ptrdiff_t(i));
        } else {
          ++i;
        }
      }
    }
    REQUIRE(choice.decided());
    table_timing direct[table_choice_samples], table[table_choice_samples];
    for (int s = 0; s < table_choice_samples; ++s) {
      direct[s] = taken[2 * s];
      table[s] = taken[2 * s + 1];
    }
    CHECK(choice.path() == decide_table_path(direct, table, table_choice_samples));
  }
}
