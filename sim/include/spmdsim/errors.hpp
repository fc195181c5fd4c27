// Exceptions for bad input. They mirror the Python exception JAX raises for the same mistake, and their
// messages follow JAX's wording, so a JAX user recognises them.
#pragma once

#include <stdexcept>
#include <string>

namespace spmdsim {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // The Python exception JAX raises for this mistake ("ValueError", ...).
  virtual const char* python_type() const noexcept = 0;
};

#define SPMDSIM_ERROR_TYPE(Name)                                        \
  class Name : public Error {                                           \
   public:                                                              \
    using Error::Error;                                                 \
    const char* python_type() const noexcept override { return #Name; } \
  }

SPMDSIM_ERROR_TYPE(ValueError);
SPMDSIM_ERROR_TYPE(TypeError);
SPMDSIM_ERROR_TYPE(NameError);
SPMDSIM_ERROR_TYPE(IndexError);
// A use of an array that a donating call deleted.
SPMDSIM_ERROR_TYPE(RuntimeError);
// What JAX runs and spmdsim does not (Python's type for an unimplemented case).
SPMDSIM_ERROR_TYPE(NotImplementedError);

#undef SPMDSIM_ERROR_TYPE

// A device allocation that does not fit: names the device, the allocation and what was live.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
  // JAX surfaces XLA's RESOURCE_EXHAUSTED as XlaRuntimeError.
  const char* python_type() const noexcept override { return "XlaRuntimeError"; }
};

}  // namespace spmdsim
