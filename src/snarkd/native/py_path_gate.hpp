// The pybind11 side of path_gate.hpp, for every extension module that has path switches
// (_core, _witness): `Computing` around each computation that releases the GIL, and
// `switch_paths` around each change of a switch.
#pragma once
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "path_gate.hpp"

namespace snarkd {

// A computation: the GIL released, then the module's path gate held for its whole length, so the
// module's switches never change under it.
struct Computing {
  pybind11::gil_scoped_release rel;
  struct Hold {
    Hold() { path_gate().enter(); }
    ~Hold() { path_gate().leave(); }
  } hold;
};

// Changes the module's process-wide path switches (set() with the GIL held and no computation
// running) and returns set()'s result. From inside a computation (a callback of one) it raises
// instead of waiting for itself.
template <class Set>
auto switch_paths(Set&& set) {
  if (PathGate::held_here()) throw std::runtime_error("a native path switch from inside a native call");
  {
    pybind11::gil_scoped_release rel;  // the running calls may need the GIL to end (a phase callback, a log)
    path_gate().close();
  }
  struct Reopen {
    ~Reopen() { path_gate().open(); }
  } reopen;
  return set();
}

}  // namespace snarkd
