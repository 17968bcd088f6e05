#pragma once

// What the AWS fakes write their XML answers with.

#include <chrono>
#include <ctime>
#include <string>

#include "common/strings.h"

namespace det::testing {

using det::XmlEscape;  // common/strings.h

// <name>value</name>, the value escaped.
inline std::string Element(const std::string& name, const std::string& value) {
  return "<" + name + ">" + XmlEscape(value) + "</" + name + ">";
}

// "2026-11-22T19:07:51.000Z", as AWS writes times in XML.
inline std::string IsoTime(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S.000Z", &utc);
  return text;
}

}  // namespace det::testing
