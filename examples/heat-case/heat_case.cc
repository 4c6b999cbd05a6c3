// heat_case: a small case-directory solver written for the setup/finish
// example. It knows nothing of scimesh: like many mesh codes it needs a serial
// mesh-and-decompose before the parallel run and a serial reconstruction
// after it, all in one case directory.
//
//   heat_case mesh CASE --points N --parts P   serial: the mesh, cut in P parts
//   heat_case solve CASE --steps S             MPI: one rank per part, S time steps
//   heat_case reconstruct CASE                 serial: the field, its error,
//                                              output.json and artifacts/field.csv
//
// The problem: u_t = u_xx on (0, 1), u = 0 at both ends, u(x, 0) = sin(pi x),
// explicit Euler in time; the exact solution is sin(pi x) exp(-pi^2 t).
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const double kPi = std::acos(-1.0);

struct Part {
  long first = 0;  // global index of the first interior point (from 1)
  double time = 0;
  std::vector<double> u;
};

int Fail(const std::string& why) {
  std::fprintf(stderr, "heat_case: %s\n", why.c_str());
  return 1;
}

long Flag(int argc, char** argv, const std::string& name, long fallback) {
  for (int i = 3; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::atol(argv[i + 1]);
  }
  return fallback;
}

fs::path PartFile(const fs::path& dir, long k) { return dir / ("part" + std::to_string(k)) / "field.txt"; }

bool ReadPart(const fs::path& file, Part& p) {
  std::ifstream in(file);
  size_t n = 0;
  if (!(in >> p.first >> n >> p.time)) return false;
  p.u.resize(n);
  for (double& v : p.u) {
    if (!(in >> v)) return false;
  }
  return true;
}

bool WritePart(const fs::path& file, const Part& p) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file);
  out.precision(17);
  out << p.first << ' ' << p.u.size() << ' ' << p.time << '\n';
  for (double v : p.u) out << v << '\n';
  return static_cast<bool>(out);
}

// The number of interior points, from the case's mesh file.
long Points(const fs::path& dir) {
  std::ifstream in(dir / "mesh.txt");
  long n = 0;
  in >> n;
  return n;
}

int Mesh(const fs::path& dir, long points, long parts) {
  if (points < parts || parts < 1) return Fail("mesh: need --points >= --parts >= 1");
  fs::create_directories(dir);
  std::ofstream(dir / "mesh.txt") << points << '\n';
  const double h = 1.0 / static_cast<double>(points + 1);
  for (long k = 0; k < parts; ++k) {
    Part p;
    p.first = 1 + k * points / parts;
    const long end = 1 + (k + 1) * points / parts;
    for (long i = p.first; i < end; ++i) p.u.push_back(std::sin(kPi * static_cast<double>(i) * h));
    if (!WritePart(PartFile(dir, k), p)) return Fail("mesh: cannot write part " + std::to_string(k));
  }
  std::printf("heat_case: %ld points in %ld parts\n", points, parts);
  return 0;
}

int Solve(const fs::path& dir, long steps) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Part p;
  if (!ReadPart(PartFile(dir, rank), p) || fs::exists(PartFile(dir, size))) {
    return Fail("solve: the case is not decomposed into " + std::to_string(size) + " parts (run mesh first)");
  }
  const double h = 1.0 / static_cast<double>(Points(dir) + 1);
  const double dt = 0.25 * h * h;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  const size_t n = p.u.size();
  std::vector<double> next(n);
  for (long s = 0; s < steps; ++s) {
    double lo = 0, hi = 0;  // halo values; 0 at the domain's ends
    MPI_Sendrecv(&p.u.front(), 1, MPI_DOUBLE, left, 0, &hi, 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&p.u.back(), 1, MPI_DOUBLE, right, 1, &lo, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < n; ++i) {
      const double l = i == 0 ? lo : p.u[i - 1];
      const double r = i + 1 == n ? hi : p.u[i + 1];
      next[i] = p.u[i] + dt / (h * h) * (l - 2 * p.u[i] + r);
    }
    p.u.swap(next);
  }
  p.time += static_cast<double>(steps) * dt;
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::ofstream(PartFile(dir, rank).parent_path() / "host.txt") << host << '\n';
  return WritePart(PartFile(dir, rank), p) ? 0 : Fail("solve: cannot write part " + std::to_string(rank));
}

int Reconstruct(const fs::path& dir) {
  if (const char* launch = std::getenv("SCIMESH_LAUNCH_EXIT"); launch != nullptr && std::string(launch) != "0") {
    std::printf("heat_case: the solve failed (exit status %s): nothing to reconstruct\n", launch);
    return 0;  // the step fails with the solve's own error
  }
  const long points = Points(dir);
  const double h = 1.0 / static_cast<double>(points + 1);
  std::vector<double> u;
  std::string hosts;
  double time = 0;
  long parts = 0;
  for (Part p; ReadPart(PartFile(dir, parts), p); ++parts) {
    u.insert(u.end(), p.u.begin(), p.u.end());
    time = p.time;
    std::string host;
    std::ifstream(PartFile(dir, parts).parent_path() / "host.txt") >> host;
    hosts += std::string(hosts.empty() ? "" : ",") + "\"" + host + "\"";
  }
  if (parts == 0 || static_cast<long>(u.size()) != points) return Fail("reconstruct: the case's parts are incomplete");
  double max_error = 0;
  fs::create_directories("artifacts");
  std::ofstream csv("artifacts/field.csv");
  csv << "x,u\n";
  for (long i = 0; i < points; ++i) {
    const double x = static_cast<double>(i + 1) * h;
    max_error = std::max(max_error, std::fabs(u[i] - std::sin(kPi * x) * std::exp(-kPi * kPi * time)));
    csv << x << ',' << u[i] << '\n';
  }
  std::ofstream out("output.json");
  out << "{\"points\":" << points << ",\"parts\":" << parts << ",\"time\":" << time
      << ",\"max_error\":" << max_error << ",\"hosts\":[" << hosts << "]}\n";
  std::printf("heat_case: t = %g, max error %.3g over %ld parts\n", time, max_error, parts);
  return out && csv ? 0 : Fail("reconstruct: cannot write output.json");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Fail("usage: heat_case mesh|solve|reconstruct CASE [--points N --parts P | --steps S]");
  const std::string command = argv[1];
  const fs::path dir = argv[2];
  if (command == "mesh") return Mesh(dir, Flag(argc, argv, "--points", 200), Flag(argc, argv, "--parts", 1));
  if (command == "reconstruct") return Reconstruct(dir);
  if (command != "solve") return Fail("unknown command '" + command + "'");
  MPI_Init(&argc, &argv);
  const int rc = Solve(dir, Flag(argc, argv, "--steps", 1000));
  MPI_Finalize();
  return rc;
}
