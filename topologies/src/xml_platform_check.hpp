// What SimGrid 3.32 aborts on (with a backtrace) while it loads a platform file, found first by reading the
// file's tags: a link id declared twice ("Link 'l1' declared several times"), a route given twice in a zone,
// counting a symmetrical route (the default) both ways ("The route between a and b already exists").
#pragma once

#include <string>

namespace spmdsim::topologies::detail {

// Throws ValueError "platform 'FILE', line N: ..." naming the repeated link or route and the line of its
// first declaration. `text` is the file's contents; tags SimGrid would refuse otherwise are left to it.
void check_platform_declarations(const std::string& text, const std::string& file);

}  // namespace spmdsim::topologies::detail
