// A TPU slice's inter-chip interconnect (ICI): chips on a 2D or 3D grid, each linked to
// its neighbours along every dimension, with wrap-around links closing a dimension into a
// ring (a torus) where the hardware has them.
//
// Coordinates: dimension 0 is x, 1 is y, 2 is z. A chip's physical index is
// x + X * (y + Y * z) (x varies fastest); link names count chips by it.
//
// Placement: which chip runs local rank l of the slice (rank r of the cluster runs on
// GPU r, and GPU r is local rank r mod chips of slice r / chips). The placement is a list
// of factors, innermost first: local rank l is written in mixed radix over the factors'
// sizes, and the digit of factor (dim d, size s) is that dimension's next, more significant,
// part of the chip's coordinate along d. Empty: the identity (x, then y, then z: rank l on
// physical chip l). sim/plan/mesh_torus.h derives a placement from a JAX mesh as
// jax.experimental.mesh_utils.create_device_mesh does.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace meshsim {

inline constexpr int kMaxTorusDims = 3;

struct TorusFactor {
  int dim = 0;   // 0 x, 1 y, 2 z
  int size = 1;  // >= 1
};

struct TorusSpec {
  std::vector<int> dims;  // slice shape, x first; 1 to 3 entries, each >= 1
  // Per dimension: whether a wrap-around link joins its last chip to its first. Ignored
  // on dimensions of size <= 2 (size 2: the two chips share one link pair).
  std::vector<bool> wraparound;
  std::vector<TorusFactor> placement;  // empty: identity

  int Dims() const { return static_cast<int>(dims.size()); }
  int64_t Chips() const {
    int64_t n = 1;
    for (int d : dims) n *= d;
    return n;
  }
  int Size(int d) const { return d < Dims() ? dims[d] : 1; }
  // Whether dimension d is a ring (wrap-around link, size > 2).
  bool Ring(int d) const {
    return Size(d) > 2 && d < static_cast<int>(wraparound.size()) && wraparound[d];
  }
  // Physical links (one per neighbouring pair) along dimension d per line of chips.
  int LinksPerLine(int d) const { return Size(d) <= 1 ? 0 : (Ring(d) ? Size(d) : Size(d) - 1); }
  // ICI links out of one chip (wrap-around and not), e.g. 6 on a 3D torus.
  int PortsPerChip() const {
    int p = 0;
    for (int d = 0; d < Dims(); ++d) p += Size(d) <= 1 ? 0 : (Size(d) == 2 ? 1 : 2);
    return p;
  }

  // Coordinates of the chip that runs local rank `l` (0 <= l < Chips()).
  std::array<int, kMaxTorusDims> CoordsOfRank(int64_t l) const {
    std::array<int, kMaxTorusDims> c{};
    if (placement.empty()) return CoordsOfChip(l);
    std::array<int, kMaxTorusDims> scale{1, 1, 1};
    for (const TorusFactor& f : placement) {
      c[f.dim] += static_cast<int>(l % f.size) * scale[f.dim];
      scale[f.dim] *= f.size;
      l /= f.size;
    }
    return c;
  }
  std::array<int, kMaxTorusDims> CoordsOfChip(int64_t chip) const {
    std::array<int, kMaxTorusDims> c{};
    for (int d = 0; d < Dims(); ++d) {
      c[d] = static_cast<int>(chip % dims[d]);
      chip /= dims[d];
    }
    return c;
  }
  int64_t ChipAt(const std::array<int, kMaxTorusDims>& c) const {
    int64_t chip = 0;
    for (int d = Dims() - 1; d >= 0; --d) chip = chip * dims[d] + c[d];
    return chip;
  }
  // Hops from a to b along dimension d: the shorter way round a ring (ties: +), or the
  // straight way along a line. Positive: in the + direction.
  int Offset(int d, int a, int b) const {
    const int n = Size(d), fwd = ((b - a) % n + n) % n;
    if (!Ring(d)) return b - a;
    return fwd <= n / 2 ? fwd : fwd - n;
  }
};

}  // namespace meshsim
