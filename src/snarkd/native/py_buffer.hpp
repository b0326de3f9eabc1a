// Zero-copy access to Python buffers for the pybind11 modules (_core, _setup, ...).
// Key sections come straight from an mmap'd file: never copy them, and name the
// argument in every error.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace snarkd {
namespace py = pybind11;

// RAII view of a C-contiguous buffer.
struct Buf {
  Py_buffer view{};
  bool ok = false;
  const char* name;
  Buf(py::handle obj, const char* nm, bool writable = false) : name(nm) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) {
      PyErr_Clear();
      throw py::value_error(std::string(nm) + ": expected a C-contiguous " + (writable ? "writable " : "") +
                            "buffer (bytes, memoryview or numpy array)");
    }
    ok = true;
  }
  ~Buf() { if (ok) PyBuffer_Release(&view); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  const uint8_t* data() const { return (const uint8_t*)view.buf; }
  uint8_t* wdata() const { return (uint8_t*)view.buf; }
  size_t len() const { return (size_t)view.len; }
  // number of elements of `esize` bytes; the length must be a multiple
  size_t count(size_t esize, const char* what) const {
    if (len() % esize != 0)
      throw py::value_error(std::string(name) + ": byte length " + std::to_string(len()) +
                            " is not a multiple of " + std::to_string(esize) + " (" + what + ")");
    return len() / esize;
  }
};

}  // namespace snarkd
