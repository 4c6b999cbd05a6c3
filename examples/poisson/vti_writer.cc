// Gather to rank 0 and the ASCII VTK ImageData writer.
#include "examples/poisson/vti_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "examples/poisson/model_problem.h"

namespace scimesh::poisson {

namespace {

// The owned points of `u`, x fastest, without ghosts.
std::vector<double> Pack(const Subdomain& s, const std::vector<double>& u) {
  std::vector<double> out;
  out.reserve(s.owned_points());
  const auto& c = s.count();
  for (int k = 0; k < c[2]; ++k)
    for (int j = 0; j < c[1]; ++j)
      for (int i = 0; i < c[0]; ++i) out.push_back(u[s.Index(i, j, k)]);
  return out;
}

// Rank 0: every rank's packed block placed into the (n+2)³ node grid.
std::vector<double> Assemble(const Subdomain& s, const std::vector<double>& gathered,
                             const std::vector<int>& displs) {
  const std::size_t m = std::size_t(s.n()) + 2;
  std::vector<double> grid(m * m * m, 0.0);
  for (int r = 0; r < s.ranks(); ++r) {
    const auto b = s.BlockOf(r);
    std::size_t q = std::size_t(displs[std::size_t(r)]);
    for (int k = 0; k < b[2].count; ++k)
      for (int j = 0; j < b[1].count; ++j)
        for (int i = 0; i < b[0].count; ++i) {
          const std::size_t gi = std::size_t(b[0].first) + std::size_t(i) + 1,
                            gj = std::size_t(b[1].first) + std::size_t(j) + 1,
                            gk = std::size_t(b[2].first) + std::size_t(k) + 1;
          grid[(gk * m + gj) * m + gi] = gathered[q++];
        }
  }
  return grid;
}

// Closes on the error paths only, where the write has already failed and is
// reported; the success path closes itself and checks fclose.
struct FileCloser {
  void operator()(std::FILE* f) const { (void)std::fclose(f); }
};

Status WriteGrid(const Subdomain& s, const std::vector<double>& grid, const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "w"));
  if (!f) return Status::Io(std::string("cannot create the solution file: ") + std::strerror(errno));
  const auto write_failed = [] {
    return Status::Io(std::string("cannot write the solution file: ") + std::strerror(errno));
  };
  const int m = s.n() + 1;  // extents are inclusive: nodes 0..n+1
  const double h = s.h();
  if (std::fprintf(f.get(),
                   "<?xml version=\"1.0\"?>\n"
                   "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                   "  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"0 0 0\" Spacing=\"%.17g %.17g %.17g\">\n"
                   "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n"
                   "      <PointData Scalars=\"u\">\n",
                   m, m, m, h, h, h, m, m, m) < 0)
    return write_failed();
  for (int field = 0; field < 2; ++field) {
    if (std::fprintf(f.get(), "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n",
                     field == 0 ? "u" : "error") < 0)
      return write_failed();
    std::size_t q = 0;
    for (int k = 0; k <= m; ++k)
      for (int j = 0; j <= m; ++j) {
        for (int i = 0; i <= m; ++i, ++q) {
          const double v = field == 0 ? grid[q] : grid[q] - ExactSolution(i * h, j * h, k * h);
          if (std::fprintf(f.get(), i == 0 ? "%.12g" : " %.12g", v) < 0) return write_failed();
        }
        if (std::fputc('\n', f.get()) == EOF) return write_failed();
      }
    if (std::fprintf(f.get(), "        </DataArray>\n") < 0) return write_failed();
  }
  if (std::fprintf(f.get(), "      </PointData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n") < 0)
    return write_failed();
  if (std::ferror(f.get()) || std::fclose(f.release()) != 0) return write_failed();
  return Status::Ok();
}

}  // namespace

Status WriteSolutionVti(const Subdomain& s, const std::vector<double>& u, const std::string& path) {
  const std::vector<double> mine = Pack(s, u);
  const int my_count = int(mine.size());
  std::vector<int> counts(s.rank() == 0 ? std::size_t(s.ranks()) : 0), displs(counts.size());
  MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, s.comm());
  std::vector<double> gathered;
  if (s.rank() == 0) {
    int total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displs[r] = total;
      total += counts[r];
    }
    gathered.resize(std::size_t(total));
  }
  MPI_Gatherv(mine.data(), my_count, MPI_DOUBLE, gathered.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              s.comm());
  Status status;
  if (s.rank() == 0) status = WriteGrid(s, Assemble(s, gathered, displs), path);
  int ok = status.ok() ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, s.comm());
  if (s.rank() != 0 && !ok) return Status::Io("rank 0 could not write the solution file");
  return status;
}

}  // namespace scimesh::poisson
