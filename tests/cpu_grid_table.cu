// CPU grid simulation of every activation of the op table (common/op_table.hpp): its forward (out
// of place and in place), backward (dx out of place and over dy) and backward from the output,
// for a 32-bit and a 16-bit dtype (fp32: 4-element vectors; bf16: 8, computing in float), at the
// automatic width with one and with the most vectors per thread, over the grids the launch model
// gives and a one-warp grid. The index logic itself is the same for every op (cpu_grid.cu covers
// it in depth for every dtype); this checks that each row goes through it: every element written
// once with what the op gives at that element. Two dtypes, not four: each row x pass x dtype is
// about a CPU second of compile time; the GPU suite runs every row in every dtype.
#include "catch.hpp"
#include "grid_simulation.hpp"

using namespace cuact_test;
using cuact::detail::type_list;

TEMPLATE_TEST_CASE("grid simulation: every activation of the op table, every pass",
                   "[cpu][grid][table]", CUACT_TEST_DTYPES) {
  using T = TestType;
  constexpr int V = 16 / sizeof(T);
  tally total;
  std::uint64_t seed = 5000;
  for_each_activation([&](const auto& row) {
    using A = typename std::decay_t<decltype(row)>::activation_type;
    for_each_pass([&](auto p) {
      constexpr pass P = decltype(p)::value;
      if constexpr (pass_applies_v<P, A>) {
        constexpr int inputs = pass_inputs(P);
        const auto op = pass_op<P, T>(row.act);
        using ins = std::conditional_t<inputs == 1, type_list<T>, type_list<T, T>>;
        using sim_t = elementwise_sim<V, decltype(op), type_list<T>, ins>;
        using params_t = cuact::detail::elementwise_params<decltype(op), V, type_list<T>, ins>;
        for (unsigned k : {1u, static_cast<unsigned>(params_t::max_vectors_per_thread)}) {
          for (std::size_t n :
               {std::size_t(V + 1), std::size_t(1003), std::size_t(256 * V * k + 3)}) {
            for (int placement = 0; placement < 3; ++placement) {
              sim_layout l;
              l.n = n;
              l.vectors_per_thread = k;
              l.seed = ++seed;
              std::fill(std::begin(l.in_offset), std::end(l.in_offset), 1);
              std::fill(std::begin(l.out_offset), std::end(l.out_offset), 1);
              if (placement == 1) l.in_place = inputs - 1;
              if (placement == 2) l.out_offset[0] = 2;
              sim_t sim(op, l);
              const std::string what = type_name<T>() + " " + row.name + " " + pass_name(P) + " " +
                                       describe_layout(l, inputs, 1);
              report_case(sim.run(grids_for(sim.params(), n == 1003)), what, total, n);
            }
          }
        }
      }
    });
  });
  total.print("grid simulation of the op table, " + type_name<T>());
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}
