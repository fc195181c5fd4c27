// An outside program: psum over 2 devices of a switch cluster, using only the installed umbrella header.
#include <cstdio>
#include <vector>

#include <spmdsim/spmdsim.hpp>

int main() {
  using namespace spmdsim;
  try {
    Simulation sim(topologies::switch_cluster(topologies::default_switch_cluster(2)));
    // Row d goes to device d; each device adds its row to the other's.
    Array x = Array::from_values({2, 3}, {1, 2, 3, 10, 20, 30});
    auto total = pmap([](const Args& a) -> Tree { return psum(a[0].array(), "i"); }, {.axis_name = "i"});
    Array out = sim.device_get(total(sim, {x})).leaf();
    std::printf("psum over 2 devices:\n%s\nsimulated time: %g s\n", out.to_string().c_str(), sim.now());
    const Array expected = Array::from_values({2, 3}, {11, 22, 33, 11, 22, 33});
    if (!allclose(out, expected)) {
      std::printf("FAIL: expected\n%s\n", expected.to_string().c_str());
      return 1;
    }
    std::printf("OK\n");
    return 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
