#pragma once

// One page of a bucket listing as S3 (ListObjects, ListObjectsV2) and Cloud Storage
// (objects.list) give it, shared by the two fakes: the names under `prefix` in order, each with
// `delimiter` after the prefix rolled up into one common prefix, objects and common prefixes
// counted together against the page size.

#include <cstddef>
#include <string>

namespace det::testing {

struct ListingQuery {
  std::string prefix;
  std::string delimiter;   // "" : no roll-up
  std::string skip_under;  // names under it are left out (a page token that ended on a prefix)
  std::string end_before;  // "" : no end (Cloud Storage's endOffset)
  size_t page = 1000;      // the most entries the page holds
};

struct ListingPage {
  size_t count = 0;        // entries on the page
  bool truncated = false;  // whether entries were left after it
};

// Walks `objects` (a map ordered by name) from `from`; calls `on_object(name, value)` or
// `on_prefix(common_prefix)` for each entry of the page, in order.
template <class Objects, class OnObject, class OnPrefix>
ListingPage ListPage(const Objects& objects, typename Objects::const_iterator from,
                     const ListingQuery& query, OnObject on_object, OnPrefix on_prefix) {
  ListingPage page;
  std::string last_prefix;
  for (auto it = from; it != objects.end(); ++it) {
    const std::string& name = it->first;
    if (!query.end_before.empty() && name >= query.end_before) break;
    if (!name.starts_with(query.prefix)) {
      if (name > query.prefix) break;
      continue;
    }
    if (!query.skip_under.empty() && name.starts_with(query.skip_under)) continue;
    std::string common;
    if (!query.delimiter.empty()) {
      const size_t at = name.find(query.delimiter, query.prefix.size());
      if (at != std::string::npos) common = name.substr(0, at + query.delimiter.size());
    }
    if (!common.empty() && common == last_prefix) continue;
    if (page.count == query.page) {
      page.truncated = true;
      break;
    }
    ++page.count;
    if (!common.empty()) {
      last_prefix = common;
      on_prefix(common);
    } else {
      on_object(name, it->second);
    }
  }
  return page;
}

}  // namespace det::testing
