// Subdomain: Cartesian decomposition of the interior grid and the halo exchange.
#include "examples/poisson/subdomain.h"

#include <algorithm>
#include <string>

namespace scimesh::poisson {

BlockRange SplitEvenly(int n, int parts, int coord) {
  const int base = n / parts, extra = n % parts;
  return {coord * base + std::min(coord, extra), base + (coord < extra ? 1 : 0)};
}

namespace {

// A one-point-thick face of a local array with ghosts, x fastest.
// `at` is the stored (ghost-inclusive) index of the face along `dim`.
Status FaceType(const std::array<int, 3>& count, int dim, int at, MPI_Datatype* type) {
  // MPI_ORDER_C: the slowest dimension first, so z, y, x.
  int sizes[3], subsizes[3], starts[3];
  for (int d = 0; d < 3; ++d) {
    const int c = 2 - d;
    sizes[c] = count[d] + 2;
    subsizes[c] = d == dim ? 1 : count[d];
    starts[c] = d == dim ? at : 1;
  }
  if (MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, type) != MPI_SUCCESS ||
      MPI_Type_commit(type) != MPI_SUCCESS)
    return Status::Internal("subdomain: MPI_Type_create_subarray failed");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Subdomain>> Subdomain::Create(MPI_Comm comm, int n) {
  std::unique_ptr<Subdomain> s(new Subdomain());
  s->n_ = n;
  MPI_Comm_size(comm, &s->ranks_);
  if (MPI_Dims_create(s->ranks_, 3, s->dims_.data()) != MPI_SUCCESS)
    return Status::Internal("subdomain: MPI_Dims_create failed");
  if (*std::max_element(s->dims_.begin(), s->dims_.end()) > n)
    return Status::InvalidArgument("mesh n=" + std::to_string(n) + " is too small for " +
                                   std::to_string(s->ranks_) + " ranks (process grid " +
                                   std::to_string(s->dims_[0]) + "x" + std::to_string(s->dims_[1]) + "x" +
                                   std::to_string(s->dims_[2]) + ")");
  const int periodic[3] = {0, 0, 0};
  if (MPI_Cart_create(comm, 3, s->dims_.data(), periodic, /*reorder=*/0, &s->cart_) != MPI_SUCCESS)
    return Status::Internal("subdomain: MPI_Cart_create failed");
  MPI_Comm_rank(s->cart_, &s->rank_);
  MPI_Cart_coords(s->cart_, s->rank_, 3, s->coords_.data());
  for (int d = 0; d < 3; ++d) {
    const BlockRange b = SplitEvenly(n, s->dims_[d], s->coords_[d]);
    s->first_[d] = b.first;
    s->count_[d] = b.count;
  }
  for (int d = 0; d < 3; ++d) {
    const std::size_t lo = 2 * std::size_t(d), hi = lo + 1;  // the low and high side of dimension d
    if (MPI_Cart_shift(s->cart_, d, 1, &s->neighbor_[lo], &s->neighbor_[hi]) != MPI_SUCCESS)
      return Status::Internal("subdomain: MPI_Cart_shift failed");
    // Owned faces are stored at 1 and count; ghost layers at 0 and count + 1.
    SCIMESH_RETURN_IF_ERROR(FaceType(s->count_, d, 1, &s->owned_face_[lo]));
    SCIMESH_RETURN_IF_ERROR(FaceType(s->count_, d, s->count_[d], &s->owned_face_[hi]));
    SCIMESH_RETURN_IF_ERROR(FaceType(s->count_, d, 0, &s->ghost_face_[lo]));
    SCIMESH_RETURN_IF_ERROR(FaceType(s->count_, d, s->count_[d] + 1, &s->ghost_face_[hi]));
  }
  return s;
}

Subdomain::~Subdomain() {
  for (int f = 0; f < 6; ++f) {
    if (owned_face_[f] != MPI_DATATYPE_NULL) MPI_Type_free(&owned_face_[f]);
    if (ghost_face_[f] != MPI_DATATYPE_NULL) MPI_Type_free(&ghost_face_[f]);
  }
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

std::array<BlockRange, 3> Subdomain::BlockOf(int r) const {
  std::array<int, 3> c{};
  MPI_Cart_coords(cart_, r, 3, c.data());
  return {SplitEvenly(n_, dims_[0], c[0]), SplitEvenly(n_, dims_[1], c[1]), SplitEvenly(n_, dims_[2], c[2])};
}

Status Subdomain::ExchangeHalo(std::vector<double>& field) const {
  if (field.size() != field_size()) return Status::Internal("subdomain: field of the wrong size");
  MPI_Request requests[12];
  int used = 0;
  for (int f = 0; f < 6; ++f) {
    // Tag by the direction of travel: a message sent to the high neighbour
    // lands in its low ghost layer, so it is received under the same tag.
    const int dim = f / 2, side = f % 2;
    const int send_tag = 2 * dim + side, recv_tag = 2 * dim + (1 - side);
    if (MPI_Irecv(field.data(), 1, ghost_face_[f], neighbor_[f], recv_tag, cart_, &requests[used++]) != MPI_SUCCESS ||
        MPI_Isend(field.data(), 1, owned_face_[f], neighbor_[f], send_tag, cart_, &requests[used++]) != MPI_SUCCESS)
      return Status::Internal("subdomain: halo send/receive could not be posted");
  }
  if (MPI_Waitall(used, requests, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    return Status::Internal("subdomain: halo exchange failed");
  return Status::Ok();
}

}  // namespace scimesh::poisson
