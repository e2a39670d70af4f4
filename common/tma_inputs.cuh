/// @file tma_inputs.cuh
/// @brief The host's side of the Hopper stages' TMA: the tensor maps of A and B (and of C for the
/// TMA's stores), and the padded copies of A and B a map needs where their rows are not 16-byte
/// aligned (chapter 17 walks through the maps and the copies; chapter 21 the map of C).
///
/// A tensor map needs the matrix's address and its row pitch in multiples of 16 bytes, and the TMA
/// runs at full speed where every 64-column row of a box is one whole 128-byte line of memory
/// (rows 16 bytes past a line took 1.6 times as long, chapter 17). So A or B is copied first, into
/// rows padded to a multiple of 64 elements, wherever its rows do not fill whole lines: one launch
/// for both, in the stream order of the kernel that reads them, so a timed run includes it. Where the
/// blocks share their B tiles in clusters (chapter 24), the L2 reads B's lines once per cluster, and
/// rows the TMA can read (16-byte aligned) are read where they are, whole lines or not.
#pragma once

#include "device_buffer.cuh"
#include "matmul_flow.cuh"
#include "tensor_map.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cs {

/// Whether the rows of the bf16 matrix at @p matrix, @p row_length elements each, start on 128-byte
/// boundaries: the row length a multiple of 64 and the matrix 128-byte aligned. Then every 64-column
/// row of a box is one whole 128-byte line of memory, and the map takes the matrix where it is.
inline bool rows_fill_128_byte_lines(const __nv_bfloat16* matrix, std::int64_t row_length) {
  return row_length % 64 == 0 && reinterpret_cast<std::uintptr_t>(matrix) % 128 == 0;
}

/// Whether the TMA can read the rows of the bf16 matrix at @p matrix, @p row_length elements each,
/// where they are: the row length a multiple of 8 (16 bytes) and the matrix 16-byte aligned.
inline bool rows_are_tma_readable(const __nv_bfloat16* matrix, std::int64_t row_length) {
  return row_length % 8 == 0 && reinterpret_cast<std::uintptr_t>(matrix) % 16 == 0;
}

/// Copies A (@p a_rows x @p a_cols) and B, bf16, row-major, into rows of @p a_pitch and @p b_pitch
/// elements (multiples of 8), zeros after each row's end, in one launch (blocks below @p a_blocks
/// copy A). A thread writes two 16-byte chunks, blockDim.x chunks apart, and reads each as four
/// 4-byte words where it lies inside its row on a 4-byte boundary (for an odd row length, every
/// other row), else element by element. (A template only so that it can live in this header.)
template <typename Element>
__global__ void pad_rows_of_both(const Element* a, Element* a_padded, std::int64_t a_rows,
                                 std::int64_t a_cols, std::int64_t a_pitch, const Element* b,
                                 Element* b_padded, std::int64_t b_rows, std::int64_t b_cols,
                                 std::int64_t b_pitch, std::int64_t a_blocks) {
  static_assert(sizeof(Element) == 2, "eight elements to a 16-byte chunk");
  const bool of_b = blockIdx.x >= a_blocks;
  const Element* const from = of_b ? b : a;
  Element* const to = of_b ? b_padded : a_padded;
  const std::int64_t cols = of_b ? b_cols : a_cols, pitch = of_b ? b_pitch : a_pitch;
  const std::int64_t chunks = (of_b ? b_rows : a_rows) * (pitch / 8);
  const std::int64_t first_chunk = (blockIdx.x - (of_b ? a_blocks : 0)) * 2 * blockDim.x + threadIdx.x;
  uint4 eight[2]; // the two chunks, 8 elements each
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t chunk = first_chunk + h * blockDim.x;
    const std::int64_t row = chunk / (pitch / 8), col = chunk % (pitch / 8) * 8, at = row * cols + col;
    if (chunk < chunks && col + 8 <= cols && reinterpret_cast<std::uintptr_t>(from + at) % 4 == 0) {
      const unsigned* const words = reinterpret_cast<const unsigned*>(from + at);
      eight[h] = make_uint4(__ldg(words), __ldg(words + 1), __ldg(words + 2), __ldg(words + 3));
    } else {
      alignas(16) Element elements[8];
#pragma unroll
      for (int e = 0; e < 8; ++e)
        elements[e] = chunk < chunks && col + e < cols ? from[at + e] : Element(0.0f);
      eight[h] = *reinterpret_cast<const uint4*>(elements);
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t chunk = first_chunk + h * blockDim.x;
    if (chunk < chunks) reinterpret_cast<uint4*>(to)[chunk] = eight[h];
  }
}

/// The padded copies of A and B, kept from one launch to the next (allocated at the first that
/// needs each, or again when the size changes).
struct PaddedInputs {
  DeviceBuffer<__nv_bfloat16> a{0}; ///< A with rows padded to a multiple of 64 elements
  DeviceBuffer<__nv_bfloat16> b{0}; ///< B likewise
};

/// A tensor map of a row-major bf16 matrix of @p rows x @p cols at @p matrix, its rows @p pitch
/// elements apart (16-byte aligned, as the matrix itself), for copies of boxes of @p box_rows rows
/// by 64 columns (128 bytes: the widest box the 128-byte swizzle takes), landing in shared memory
/// with that swizzle; the parts of a box outside the matrix land as zeros. Each request to the L2
/// is promoted to 128 bytes, a box's row, and no wider (256 was slower where rows cross lines and
/// where B streams: chapter 17). Encoded by the driver's cuTensorMapEncodeTiled, which checks every
/// limit.
inline CUtensorMap tile_map(const __nv_bfloat16* matrix, std::int64_t rows, std::int64_t cols,
                            std::int64_t pitch, int box_rows) {
  CUtensorMap map;
  const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)}; // inner first
  const cuuint64_t row_pitch_bytes[1] = {static_cast<cuuint64_t>(pitch) *
                                         sizeof(__nv_bfloat16)}; // the outer's
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_steps[2] = {1, 1};                    // every element of the box, none skipped
  const CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B; // the layout the descriptors describe
  CU_CHECK(tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<__nv_bfloat16*>(matrix),
                                sizes, row_pitch_bytes, box, element_steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// The tensor maps of a problem's A and B.
struct InputMaps {
  CUtensorMap a; ///< A, in boxes of a_box_rows rows x 64 columns
  CUtensorMap b; ///< B, in boxes of b_box_rows rows x 64 columns
};

/// The tensor maps of @p p's A (boxes of @p a_box_rows x 64) and B (@p b_box_rows x 64): each of
/// the matrix where it is when its rows fill whole 128-byte lines (or, with @p in_place_where_readable,
/// whenever the TMA can read them), else of its copy in @p padded, rows padded to a multiple of 64,
/// made first by one launch of pad_rows_of_both for both.
inline InputMaps input_maps(const Bf16MatmulArgs& p, int a_box_rows, int b_box_rows, PaddedInputs& padded,
                            bool in_place_where_readable = false) {
  const auto in_place = [&](const __nv_bfloat16* matrix, std::int64_t row_length) {
    return in_place_where_readable ? rows_are_tma_readable(matrix, row_length)
                                   : rows_fill_128_byte_lines(matrix, row_length);
  };
  const bool a_in_place = in_place(p.a, p.k), b_in_place = in_place(p.b, p.n);
  const std::int64_t a_pitch = a_in_place ? p.k : (p.k + 63) / 64 * 64,
                     b_pitch = b_in_place ? p.n : (p.n + 63) / 64 * 64;
  // A pitch of 0 leaves that matrix out of the launch: its rows need no copy.
  const std::int64_t a_copied = a_in_place ? 0 : p.m * a_pitch, b_copied = b_in_place ? 0 : p.k * b_pitch;
  if (padded.a.size() != static_cast<std::size_t>(a_copied))
    padded.a = DeviceBuffer<__nv_bfloat16>(static_cast<std::size_t>(a_copied));
  if (padded.b.size() != static_cast<std::size_t>(b_copied))
    padded.b = DeviceBuffer<__nv_bfloat16>(static_cast<std::size_t>(b_copied));
  const std::int64_t a_blocks = (a_copied / 8 + 511) / 512, b_blocks = (b_copied / 8 + 511) / 512;
  if (a_blocks + b_blocks > 0) {
    pad_rows_of_both<<<grid_of(a_blocks + b_blocks), 256>>>(p.a, padded.a.get(), p.m, p.k,
                                                            a_in_place ? 0 : a_pitch, p.b, padded.b.get(),
                                                            p.k, p.n, b_in_place ? 0 : b_pitch, a_blocks);
    CUDA_CHECK_LAUNCH();
  }
  const __nv_bfloat16* const a = a_in_place ? p.a : padded.a.get();
  const __nv_bfloat16* const b = b_in_place ? p.b : padded.b.get();
  return {tile_map(a, p.m, p.k, a_pitch, a_box_rows), tile_map(b, p.k, p.n, b_pitch, b_box_rows)};
}

/// What input_maps() does for a problem of @p shape (with @p in_place_where_readable as it is
/// given), in one line for a stage's plan.
inline std::string input_maps_note(const MatmulShape& shape, bool in_place_where_readable = false) {
  if (shape.n % 64 == 0 && shape.k % 64 == 0)
    return "n and k are multiples of 64: the tensor maps take A and B where they are";
  if (in_place_where_readable && shape.n % 8 == 0 && shape.k % 8 == 0)
    return "n or k is a multiple of 8 but not of 64: the tensor maps take A and B where they are, rows "
           "that are not whole 128-byte lines";
  return std::string("n or k is not a multiple of ") + (in_place_where_readable ? "8" : "64") +
         ": A or B (or both) is first copied into rows padded to a multiple of 64, both in one launch "
         "(in every timed run)";
}

/// A tensor map of C (@p rows x @p cols FP32, row-major, rows on 16-byte boundaries) for TMA stores
/// of boxes of 64 rows x 32 columns (128 bytes) with the 128-byte swizzle; the parts of a box outside
/// C are not written. Encoded by cuTensorMapEncodeTiled, which checks every limit.
inline CUtensorMap c_store_map(float* c, std::int64_t rows, std::int64_t cols) {
  CUtensorMap map;
  const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_pitch_bytes[1] = {static_cast<cuuint64_t>(cols) * sizeof(float)};
  const cuuint32_t box[2] = {32, 64};
  const cuuint32_t element_steps[2] = {1, 1};
  CU_CHECK(tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, c, sizes, row_pitch_bytes, box,
                                element_steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

} // namespace cs
