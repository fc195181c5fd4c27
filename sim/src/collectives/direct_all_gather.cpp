// Direct all-gather: every rank posts its piece to every other rank at once, then receives the others'
// pieces one by one, from r-1, r-2, ..., r-(p-1).
//
//   r0 ---> r1, r2, r3      all sends posted at the start
//   r1 ---> r2, r3, r0
//   ...                     receive round s: every rank r takes the piece of r - s
//
// Cost: (p-1) alpha + ((p-1)/p) n beta, n the gathered size: derived here for SimGrid on a switch (one
// up-link and one down-link per device, full duplex), not a published figure. The one-shot figure,
// alpha + ((p-1)/p) n beta, needs every receive posted at once, which the Communicator cannot express:
//  - A SimGrid transfer starts when its receive is posted, and Communicator::recv waits for its message
//    before the next receive is posted; so a rank's p-1 incoming transfers run one after another.
//  - In receive round s every rank takes the piece of r - s: the transfers of a round form a permutation,
//    one message on each up-link and each down-link, all of n/p bytes, all started together, so all end
//    together after alpha + (n/p) beta and the next round starts at once. p-1 rounds give the cost above
//    (the same as the ring's; posting the sends early changes nothing).
//  - Were all p-1 receives posted at once, every up-link and every down-link would carry p-1 flows;
//    SimGrid's max-min sharing gives each flow 1/(p-1) of the bandwidth, so all would end together at
//    alpha + (p-1)(n/p) beta = alpha + ((p-1)/p) n beta (the bandwidth term is then unchanged and the
//    latency is paid once). A bare S4U program on the same links under the pinned model gives both
//    figures exactly for p = 2, 3, 5, 8, 16: this one with every get_async posted before waiting, the
//    cost above with one at a time.
#include "collectives/algorithms.hpp"
#include "collectives/chunks.hpp"

namespace spmdsim::collectives {

std::vector<Array> direct_all_gather(Communicator& comm, const Array& mine) {
  const int p = comm.size();
  const int r = comm.rank();
  for (int s = 1; s < p; ++s) comm.send(wrap(r + s, p), mine);
  std::vector<Array> pieces(static_cast<std::size_t>(p));
  pieces[r] = mine;
  for (int s = 1; s < p; ++s) pieces[wrap(r - s, p)] = comm.recv(wrap(r - s, p));
  return pieces;
}

double direct_all_gather_cost(const CostInputs& c) {
  return (c.p - 1) * c.alpha + (c.p - 1.0) / c.p * c.n * c.beta;
}

}  // namespace spmdsim::collectives
