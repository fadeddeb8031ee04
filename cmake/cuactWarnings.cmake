# cuact_target_warnings(TARGET): -Wall -Wextra for the host compiler (C++ and CUDA translation
# units); with CUACT_WERROR=ON (CI), warnings are errors: the host compiler's through -Werror and
# nvcc's own (front end, ptxas) through -Werror all-warnings. Applies to cuact's tests, examples
# and benchmarks, never to consumers of cuact::cuact.
function(cuact_target_warnings target)
  set(host_warnings -Wall -Wextra)
  set(host_werror -Werror)
  if(MSVC)
    set(host_warnings /W4)
    set(host_werror /WX)
  endif()
  list(JOIN host_warnings "," host_warnings_csv)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${host_warnings}>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CUDA_COMPILER_ID:NVIDIA>>:-Xcompiler=${host_warnings_csv}>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CUDA_COMPILER_ID:Clang>>:${host_warnings}>)
  if(CUACT_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:${host_werror}>
      "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CUDA_COMPILER_ID:NVIDIA>>:-Xcompiler=${host_werror};SHELL:-Werror all-warnings>"
      $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CUDA_COMPILER_ID:Clang>>:${host_werror}>)
  endif()
endfunction()
