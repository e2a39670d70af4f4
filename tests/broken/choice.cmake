# Stage 23's new hazards: the rule, which must weigh every way to run a problem, and a launch whose
# sizes must follow the instance the rule chose, not one assumed. (Included from
# tests/broken/CMakeLists.txt; cs_add_broken_copy is defined in broken_copy.cmake.)

if(TARGET 23_kernel_choice)
  # The rule weighs no split: a short A (32 tiles of 64 x 256 for 132 SMs) then runs on a quarter of
  # the SMs. Nothing is wrong in C, only slow; the stage's own plan check sees it, without a GPU:
  # run on the broken copy with the same arguments, it fails.
  cs_add_broken_copy(choice_never_splits 23_kernel_choice PARAMS 64x256x64/s5
    FIND "for (const char* way : {\"never\", \"always\"})\n      if (split == \"auto\" || split == way) estimates.push_back(estimate(candidate,"
    REPLACE "for (const char* way : {\"never\"})\n      if (split == \"auto\" || split == way) estimates.push_back(estimate(candidate,")
  # Caught: the broken copy runs, and its plan does not match the stage's own plan check.
  add_test(NAME broken_choice_never_splits.caught_by_plan
           COMMAND bash -c "out=$(\"$0\" --plan --m 64 --n 8192 --k 8192) || exit 1; printf '%s\\n' \"$out\" | grep chosen; ! grep -qE 'chosen: 64x[0-9]+x64/s[0-9], split always' <<<\"$out\""
                   $<TARGET_FILE:broken_choice_never_splits>)
  set_tests_properties(broken_choice_never_splits.caught_by_plan PROPERTIES LABELS cpu ENVIRONMENT "CUDA_VISIBLE_DEVICES=")
  # The scratch buffer of split tiles sized for 64-row tiles whatever the instance: with 128 rows,
  # the later blocks' slots lie past its end. memcheck sees the accesses (wherever they land).
  cs_add_broken_copy(choice_scratch_for_64_rows 23_kernel_choice PARAMS 128x256x64/s4
    FIND "static_cast<std::size_t>(schedule.blocks * tile.block_m * tile.block_n)"
    REPLACE "static_cast<std::size_t>(schedule.blocks * 64 * tile.block_n)")
endif()
if(TARGET broken_choice_scratch_for_64_rows AND CUDA_STAGES_COMPUTE_SANITIZER)
  add_test(NAME broken_choice_scratch_for_64_rows.caught_by_memcheck
           COMMAND "${CUDA_STAGES_COMPUTE_SANITIZER}" --tool memcheck --error-exitcode 1
                   $<TARGET_FILE:broken_choice_scratch_for_64_rows> --m 131 --n 304 --k 200 --blocks 3
                   --split always --params 128x256x64/s4 --reps 1 --warmup 0)
  set_tests_properties(broken_choice_scratch_for_64_rows.caught_by_memcheck PROPERTIES
    LABELS sanitizer SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "${CUDA_STAGES_NO_GPU_REGEX}"
    PASS_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]")
endif()
