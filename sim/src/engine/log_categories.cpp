// spmdsim's XBT log categories, one per subsystem under the root `spmdsim` (docs/architecture.md). Every line
// is a verbose line (XBT_VERB: XBT compiles XBT_DEBUG out of NDEBUG builds, verbose stays), off by default;
// `--log=spmdsim.thres:debug` (or :verbose) turns them all on, `--log=spmdsim_coll.thres:debug` one subsystem
// and the categories below it. XBT's default layout prints the actor and the simulated time on each line.
#include <xbt/log.h>

XBT_LOG_NEW_CATEGORY(spmdsim, "spmdsim, the SPMD simulator");
XBT_LOG_NEW_SUBCATEGORY(spmdsim_pmap, spmdsim, "pmap calls: their devices, each device's program");
XBT_LOG_NEW_SUBCATEGORY(spmdsim_transfer, spmdsim, "host<->device transfers");
XBT_LOG_NEW_SUBCATEGORY(spmdsim_coll, spmdsim, "collective calls: group, size, the algorithm chosen");
XBT_LOG_NEW_SUBCATEGORY(spmdsim_coll_comm, spmdsim_coll, "collective messages, reductions and booked phases");
XBT_LOG_NEW_SUBCATEGORY(spmdsim_engine, spmdsim, "the engine: platform, runs, failures");
