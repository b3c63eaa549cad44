#include "journal.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace xconn::chaos {

const std::string& journal_entry::at(std::size_t i) const {
  static const std::string none;
  return i < fields.size() ? fields[i] : none;
}

journal::journal(const std::string& path) : out_(path, std::ios::app) {
  if (!out_) throw std::runtime_error("cannot open the journal " + path);
}

void journal::add(const std::string& kind, int epoch, const std::vector<std::string>& fields) {
  out_ << kind << '\t' << epoch;
  for (const auto& f : fields) out_ << '\t' << f;
  out_ << '\n';
  out_.flush();
}

std::vector<journal_entry> journal::read(const std::string& path) {
  std::vector<journal_entry> entries;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> parts;
    std::stringstream ss(line);
    std::string part;
    while (std::getline(ss, part, '\t')) parts.push_back(part);
    if (parts.size() < 2) continue;
    journal_entry e;
    e.kind = parts[0];
    e.epoch = std::stoi(parts[1]);
    e.fields.assign(parts.begin() + 2, parts.end());
    entries.push_back(std::move(e));
  }
  return entries;
}

int journal::last_epoch(const std::vector<journal_entry>& entries) {
  int e = 0;
  for (const auto& x : entries) e = std::max(e, x.epoch);
  return e;
}

}  // namespace xconn::chaos
