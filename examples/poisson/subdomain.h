// Subdomain: one rank's block of the global n×n×n interior grid on a 3D
// Cartesian process grid, its ghost layer and the halo exchange that fills it.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::poisson {

// The first index and the number of points of block `coord` when `n` points
// are split into `parts` blocks as evenly as possible: the first n % parts
// blocks get one point more. Pure.
struct BlockRange {
  int first = 0;
  int count = 0;
};
BlockRange SplitEvenly(int n, int parts, int coord);

// A field on a Subdomain is a std::vector<double> of field_size() values,
// x fastest, with one ghost layer on every side. Ghosts on the boundary of the
// unit cube hold the Dirichlet value 0 and are never written.
class Subdomain {
 public:
  // Collective over `comm`: builds a 3D Cartesian communicator of all its
  // ranks (MPI_Dims_create + MPI_Cart_create, no reordering) and this rank's
  // block of an n×n×n interior grid, h = 1/(n+1). Fails with InvalidArgument
  // when a process-grid dimension exceeds n (a rank would own no point); every
  // rank fails alike. The caller owns the result.
  static Result<std::unique_ptr<Subdomain>> Create(MPI_Comm comm, int n);
  ~Subdomain();
  Subdomain(const Subdomain&) = delete;
  Subdomain& operator=(const Subdomain&) = delete;

  MPI_Comm comm() const { return cart_; }  // owned by this object
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  int n() const { return n_; }
  double h() const { return 1.0 / (n_ + 1); }
  const std::array<int, 3>& dims() const { return dims_; }
  const std::array<int, 3>& coords() const { return coords_; }
  const std::array<int, 3>& first() const { return first_; }  // global index of local 0
  const std::array<int, 3>& count() const { return count_; }  // owned points per dim

  // The Subdomain layout of rank `r` of comm() (for gathering). Pure.
  std::array<BlockRange, 3> BlockOf(int r) const;

  std::size_t field_size() const { return std::size_t(count_[0] + 2) * (count_[1] + 2) * (count_[2] + 2); }
  std::size_t owned_points() const { return std::size_t(count_[0]) * count_[1] * count_[2]; }
  // Storage index of local point (i, j, k); -1 and count are ghost layers.
  std::size_t Index(int i, int j, int k) const {
    return (std::size_t(k + 1) * (count_[1] + 2) + std::size_t(j + 1)) * (count_[0] + 2) + std::size_t(i + 1);
  }
  std::vector<double> NewField() const { return std::vector<double>(field_size(), 0.0); }

  // Collective: fills the ghost faces of `field` with the neighbours' owned
  // faces (nonblocking sends/receives of subarray types, all six at once).
  // Edges and corners are not exchanged: the 7-point stencil never reads them.
  Status ExchangeHalo(std::vector<double>& field) const;

 private:
  Subdomain() {
    owned_face_.fill(MPI_DATATYPE_NULL);
    ghost_face_.fill(MPI_DATATYPE_NULL);
  }

  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0, ranks_ = 1, n_ = 0;
  std::array<int, 3> dims_{}, coords_{}, first_{}, count_{};
  // Per face f = 2*dim + side (side 0: low, 1: high): the neighbour rank
  // (MPI_PROC_NULL on the cube's boundary) and the owned/ghost face types.
  std::array<int, 6> neighbor_{};
  std::array<MPI_Datatype, 6> owned_face_{}, ghost_face_{};
};

}  // namespace scimesh::poisson
