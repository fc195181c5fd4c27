// A vector that the simulation appends to and reports read: copying it shares the elements (a reference
// count), and appending copies them first only while a copy still shares them. A device's memory events and
// spans run to hundreds of thousands per step on large runs; a report taken at the end then costs nothing,
// where copying them would double the memory the simulation holds.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace spmdsim {

template <class T>
class SharedVector {
 public:
  SharedVector() = default;

  using const_iterator = typename std::vector<T>::const_iterator;
  const_iterator begin() const { return items().begin(); }
  const_iterator end() const { return items().end(); }
  std::size_t size() const { return items().size(); }
  bool empty() const { return items().empty(); }
  const T& operator[](std::size_t i) const { return items()[i]; }
  const T& at(std::size_t i) const { return items().at(i); }
  const T& front() const { return items().front(); }
  const T& back() const { return items().back(); }
  operator const std::vector<T>&() const { return items(); }

  void push_back(T item) { owned().push_back(std::move(item)); }

 private:
  const std::vector<T>& items() const {
    static const std::vector<T> no_items;
    return items_ ? *items_ : no_items;
  }
  // The elements, this copy's alone: shared ones are copied first.
  std::vector<T>& owned() {
    if (!items_) items_ = std::make_shared<std::vector<T>>();
    else if (items_.use_count() > 1) items_ = std::make_shared<std::vector<T>>(*items_);
    return *items_;
  }

  std::shared_ptr<std::vector<T>> items_;
};

}  // namespace spmdsim
