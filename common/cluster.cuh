/// @file cluster.cuh
/// @brief Thread block clusters: the blocks of a cluster run at once on one GPC, may read and arrive
/// on each other's shared memory, and may receive one TMA copy together (chapter 24 walks through
/// them). Compute capability 9.0; the kernel is launched with a cluster size
/// (launch_in_clusters, kernel_table.cuh).
#pragma once

#include "shared_address.cuh"

#include <cuda.h>

#include <cstdint>

namespace cs {

/// This block's rank in its cluster, 0 .. cluster size - 1 (`%cluster_ctarank`).
__device__ __forceinline__ unsigned rank_in_cluster() {
  unsigned rank = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

/// Waits until every thread of every block of the cluster has arrived here
/// (`barrier.cluster.arrive.release` then `barrier.cluster.wait.acquire`): what each wrote before,
/// in shared memory too, is seen by all after. Every thread of each block calls it, as
/// __syncthreads.
__device__ __forceinline__ void sync_cluster() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

/// Arrives on the mbarrier at @p barrier's place in the shared memory of block @p rank of the
/// cluster (this block's own included): `mapa` turns the address into that block's, and
/// `mbarrier.arrive.shared::cluster` arrives there, a release at block scope. The caller has waited
/// for what the arrival announces (the tensor cores' reads of a buffer), so no fence at cluster
/// scope is needed: one costs the wgmma still in flight its overlap (chapter 24, pitfalls).
__device__ __forceinline__ void arrive_in_block(std::uint64_t* barrier, unsigned rank) {
  unsigned remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(shared_address(barrier)), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

/// copy_box (tma.cuh) into every block of the cluster whose bit is set in @p blocks: one read of the
/// box, landing at @p to in each one's shared memory, its bytes counted on the mbarrier at @p
/// barrier's place in each (`cp.async.bulk.tensor...multicast::cluster`).
__device__ __forceinline__ void copy_box_to_blocks(void* to, const CUtensorMap& map, int col, int row,
                                                   std::uint64_t* barrier, std::uint16_t blocks) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(shared_address(to)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(col), "r"(row), "r"(shared_address(barrier)),
      "h"(blocks)
      : "memory");
}

} // namespace cs
