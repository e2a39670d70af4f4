/// @file kernel_table.cuh
/// @brief A stage's `--params` sets and the kernel instances that run them, in one table, and the
/// launch of an instance with more shared memory than the default 48 KB (chapter 07 walks through
/// the table; chapter 11 the launch; chapter 24 the launch in clusters).
///
/// A kernel templated on its tile sizes is compiled once per set of sizes the stage offers, and the
/// set is chosen at run time: the table lists each `--params` set with its instances (one for rows
/// on 16-byte boundaries and one for the others, where the kernel has both paths), the command line
/// offers exactly its sets, and the launch looks the chosen set up. TileSizes reads the numbers of a
/// set back for the plan.
#pragma once

#include "cli.hpp"
#include "cuda_check.cuh"

#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace cs {

/// The sizes a `--params` set names. Which of them a stage's sets name, and in what order, the
/// stage's format says (tile_sizes_of); the others stay 0.
struct TileSizes {
  int block_m = 0;  ///< BM: rows of C per block
  int block_n = 0;  ///< BN: columns of C per block
  int block_k = 0;  ///< BK: the step along K
  int warp_m = 0;   ///< WM: rows of C per warp
  int warp_n = 0;   ///< WN: columns of C per warp
  int thread_m = 0; ///< TM: rows of C per thread
  int thread_n = 0; ///< TN: columns of C per thread
  int stages = 0;   ///< S: shared-memory buffers in the ring
};

/// Reads the sizes out of a `--params` set, e.g. "128x256x64/s4", as @p format names them, e.g.
/// "BMxBNxBK/sS": each of BM, BN, BK, WM, WN, TM, TN and S in the format stands for a number, every
/// other character for itself. The sets come from a stage's KernelTable, so they always match.
inline TileSizes tile_sizes_of(const std::string& params, const std::string& format) {
  TileSizes sizes;
  const std::pair<const char*, int TileSizes::*> fields[] = {
      {"BM", &TileSizes::block_m},  {"BN", &TileSizes::block_n}, {"BK", &TileSizes::block_k},
      {"WM", &TileSizes::warp_m},   {"WN", &TileSizes::warp_n},  {"TM", &TileSizes::thread_m},
      {"TN", &TileSizes::thread_n}, {"S", &TileSizes::stages}};
  std::size_t at = 0;
  for (std::size_t f = 0; f < format.size();) {
    bool field = false;
    for (const auto& [name, member] : fields)
      if (format.compare(f, std::char_traits<char>::length(name), name) == 0) {
        char* end = nullptr;
        sizes.*member = static_cast<int>(std::strtol(params.c_str() + at, &end, 10));
        at = static_cast<std::size_t>(end - params.c_str());
        f += std::char_traits<char>::length(name);
        field = true;
        break;
      }
    if (!field) ++f, ++at; // a separator, the same in both
  }
  return sizes;
}

/// One `--params` set and the kernel instances that run it.
template <typename Kernel>
struct KernelInstance {
  std::string params;         ///< the set, as `--params` names it
  Kernel aligned = nullptr;   ///< the instance for rows on 16-byte boundaries (or the only one)
  Kernel unaligned = nullptr; ///< the instance for the other rows; nullptr: `aligned` runs every problem
};

/// The instances of a stage's kernel, one row per `--params` set.
template <typename Kernel>
class KernelTable {
 public:
  /// The rows, in the order `--help` lists their sets.
  KernelTable(std::initializer_list<KernelInstance<Kernel>> rows) : rows_(rows) {}
  /// The sets, for the command line's choices.
  std::vector<std::string> params() const {
    std::vector<std::string> sets;
    for (const KernelInstance<Kernel>& row : rows_) sets.push_back(row.params);
    return sets;
  }
  /// The instance that runs @p params on rows that are (@p aligned) or are not on 16-byte
  /// boundaries; nullptr for a set the table does not have (the command line lets none through).
  Kernel find(const std::string& params, bool aligned) const {
    for (const KernelInstance<Kernel>& row : rows_)
      if (row.params == params) return aligned || row.unaligned == nullptr ? row.aligned : row.unaligned;
    return nullptr;
  }

 private:
  std::vector<KernelInstance<Kernel>> rows_;
};

/// Launches @p kernel on @p grid blocks of @p block threads with @p shared_bytes of dynamic shared
/// memory, and checks the launch. More than 48 KB needs the kernel's opt-in first
/// (cudaFuncAttributeMaxDynamicSharedMemorySize), which this gives it every time: a cheap call.
template <typename... Parameters, typename... Arguments>
void launch_with_shared_memory(void (*kernel)(Parameters...), dim3 grid, dim3 block, std::size_t shared_bytes,
                               Arguments&&... arguments) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(shared_bytes)));
  kernel<<<grid, block, shared_bytes>>>(std::forward<Arguments>(arguments)...);
  CUDA_CHECK_LAUNCH();
}

/// The launch configuration of @p grid blocks of @p block threads with @p shared_bytes of dynamic
/// shared memory in clusters of @p cluster blocks along x, for cudaLaunchKernelEx; @p attribute
/// holds the cluster size (and must outlive the configuration).
inline cudaLaunchConfig_t cluster_config(dim3 grid, dim3 block, std::size_t shared_bytes, int cluster,
                                         cudaLaunchAttribute& attribute) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

/// How many clusters of @p cluster blocks of @p kernel (@p block threads, @p shared_bytes of dynamic
/// shared memory) the GPU runs at once (cudaOccupancyMaxActiveClusters): a cluster's blocks must
/// all fit on one GPC, so the SMs a GPC has beyond a multiple of the cluster size may stay empty.
template <typename... Parameters>
int clusters_at_once(void (*kernel)(Parameters...), dim3 block, std::size_t shared_bytes, int cluster) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(shared_bytes)));
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_config(dim3(cluster), block, shared_bytes, cluster, attribute);
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
  return clusters;
}

/// launch_with_shared_memory in clusters of @p cluster blocks along x (@p grid a multiple of it),
/// through cudaLaunchKernelEx; a cluster of 1 is a plain launch, without the attribute.
template <typename... Parameters, typename... Arguments>
void launch_in_clusters(void (*kernel)(Parameters...), dim3 grid, dim3 block, std::size_t shared_bytes,
                        int cluster, Arguments&&... arguments) {
  if (cluster == 1)
    return launch_with_shared_memory(kernel, grid, block, shared_bytes,
                                     std::forward<Arguments>(arguments)...);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(shared_bytes)));
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_config(grid, block, shared_bytes, cluster, attribute);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Arguments>(arguments)...));
}

} // namespace cs
