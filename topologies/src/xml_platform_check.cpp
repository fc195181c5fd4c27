#include "xml_platform_check.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmdsim/errors.hpp"

namespace spmdsim::topologies::detail {
namespace {

// One start tag: its name, attributes and the line it starts on.
struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  int line = 0;
  bool closing = false;       // </name>
  bool self_closing = false;  // <name ... />
};

// The file's tags in order, comments, processing instructions and the DOCTYPE skipped. Stops at the first
// tag it cannot read: SimGrid's own parser says what is wrong with it.
std::vector<Tag> read_tags(std::string_view text) {
  std::vector<Tag> tags;
  int line = 1;
  std::size_t i = 0;
  const auto advance_to = [&](std::size_t end) {
    for (; i < end && i < text.size(); ++i)
      if (text[i] == '\n') ++line;
  };
  const auto skip_past = [&](std::string_view end) {
    const auto at = text.find(end, i);
    if (at == std::string_view::npos) return false;
    advance_to(at + end.size());
    return true;
  };
  const auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == ':' || c == '.';
  };
  while (i < text.size()) {
    const auto open = text.find('<', i);
    if (open == std::string_view::npos) break;
    advance_to(open);
    if (text.substr(i).starts_with("<!--")) {
      if (!skip_past("-->")) break;
      continue;
    }
    if (text.substr(i).starts_with("<?")) {
      if (!skip_past("?>")) break;
      continue;
    }
    if (text.substr(i).starts_with("<!")) {
      if (!skip_past(">")) break;
      continue;
    }
    Tag tag{.line = line};
    advance_to(i + 1);
    if (i < text.size() && text[i] == '/') {
      tag.closing = true;
      advance_to(i + 1);
    }
    const std::size_t name_start = i;
    while (i < text.size() && is_name_char(text[i])) advance_to(i + 1);
    tag.name = std::string(text.substr(name_start, i - name_start));
    for (;;) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) advance_to(i + 1);
      if (i >= text.size()) return tags;
      if (text[i] == '>') {
        advance_to(i + 1);
        break;
      }
      if (text.substr(i).starts_with("/>")) {
        tag.self_closing = true;
        advance_to(i + 2);
        break;
      }
      const std::size_t attribute_start = i;
      while (i < text.size() && is_name_char(text[i])) advance_to(i + 1);
      const std::string attribute(text.substr(attribute_start, i - attribute_start));
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) advance_to(i + 1);
      if (attribute.empty() || i >= text.size() || text[i] != '=') return tags;
      advance_to(i + 1);
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) advance_to(i + 1);
      if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) return tags;
      const char quote = text[i];
      advance_to(i + 1);
      const auto close = text.find(quote, i);
      if (close == std::string_view::npos) return tags;
      tag.attributes[attribute] = std::string(text.substr(i, close - i));
      advance_to(close + 1);
    }
    tags.push_back(std::move(tag));
  }
  return tags;
}

std::string attribute(const Tag& tag, const std::string& name) {
  const auto it = tag.attributes.find(name);
  return it == tag.attributes.end() ? std::string() : it->second;
}

bool is_zone(const std::string& name) {
  return name == "zone" || name == "AS";
}

// Routes between hosts (route) and between zones (zoneRoute, ASroute, as SimGrid 3.32 still reads them).
bool is_route(const std::string& name) {
  return name == "route" || name == "zoneRoute" || name == "ASroute";
}

// SimGrid 3.32 aborts on a zone whose routing it does not know (sg_platf.cpp, sg_platf_create_zone): these
// are the names it takes, in any case.
void check_routing(const Tag& zone, const std::string& file) {
  static constexpr std::array<std::string_view, 8> kRoutings = {
      "Cluster", "Dijkstra", "DijkstraCache", "Floyd", "Full", "None", "Vivaldi", "Wifi"};
  const auto it = zone.attributes.find("routing");
  if (it == zone.attributes.end()) return;
  const auto same = [&](std::string_view name) {
    return std::equal(name.begin(), name.end(), it->second.begin(), it->second.end(), [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
  };
  if (std::none_of(kRoutings.begin(), kRoutings.end(), same))
    throw ValueError(fmt::format("platform '{}', line {}: zone '{}' has routing '{}'; SimGrid's are {}", file,
                                 zone.line, attribute(zone, "id"), it->second, fmt::join(kRoutings, ", ")));
}

}  // namespace

void check_platform_declarations(const std::string& text, const std::string& file) {
  std::map<std::string, int> link_lines;
  // Per open zone: the line of each (src, dst) pair its routes cover.
  std::vector<std::map<std::pair<std::string, std::string>, int>> zones(1);
  for (const Tag& tag : read_tags(text)) {
    if (is_zone(tag.name)) {
      if (!tag.closing) check_routing(tag, file);
      if (tag.closing && zones.size() > 1) zones.pop_back();
      if (!tag.closing && !tag.self_closing) zones.emplace_back();
      continue;
    }
    if (tag.closing) continue;
    if (tag.name == "link" || tag.name == "backbone") {
      const std::string id = attribute(tag, "id");
      const auto [it, added] = link_lines.emplace(id, tag.line);
      if (!added)
        throw ValueError(
            fmt::format("platform '{}', line {}: link '{}' is declared again (first on line {}); every link "
                        "needs its own id",
                        file, tag.line, id, it->second));
      continue;
    }
    if (!is_route(tag.name)) continue;
    const std::string src = attribute(tag, "src");
    const std::string dst = attribute(tag, "dst");
    const std::string symmetrical = attribute(tag, "symmetrical");
    std::vector<std::pair<std::string, std::string>> pairs = {{src, dst}};
    if (symmetrical != "NO" && symmetrical != "no" && src != dst) pairs.emplace_back(dst, src);
    for (const auto& pair : pairs) {
      const auto [it, added] = zones.back().emplace(pair, tag.line);
      if (!added)
        throw ValueError(fmt::format(
            "platform '{}', line {}: the route from '{}' to '{}' is given again (first on line {}); a route "
            "goes both ways unless it says symmetrical=\"NO\"",
            file, tag.line, pair.first, pair.second, it->second));
    }
  }
}

}  // namespace spmdsim::topologies::detail
